import FitBaseCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes photo thumbnails outside the server's process: each photo goes to a new ``ImageWorker`` (the server's own
/// binary, `fitbase image-worker`) under an address-space and CPU limit, at most one worker per core at a time, each
/// stopped after a deadline. A worker that is refused by its decoder, runs out of memory or CPU, crashes or is stopped
/// costs its upload a problem; the server's memory and process are untouched. A photo its library refuses cleanly
/// gets no thumbnail, as before (the photo is served for both sizes).
struct ContainedThumbnailer: Sendable {
    /// How a worker is started and what it may use.
    struct Settings: Sendable, Equatable {
        /// The `fitbase` executable run as the worker.
        var executable: String
        /// Its address-space limit, in bytes.
        var memoryBytes: Int
        /// Its CPU-time limit, in seconds.
        var cpuSeconds: Int
        /// What its decoders may build.
        var limits: DecodeLimits
        /// How long the server waits for it before killing it (wall-clock, slots waited for not included).
        var deadline: Duration { .seconds(cpuSeconds * 2 + 5) }
    }

    let settings: Settings
    /// The workers allowed at once (one per core), shared by every upload of this server.
    let slots: WorkerSlots

    init(settings: Settings, concurrency: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.settings = settings
        slots = WorkerSlots(count: max(1, concurrency))
        // A worker that dies before reading all of its input must cost a failed write, not this process.
        signal(SIGPIPE, SIG_IGN)
    }

    /// The thumbnail of `image`, nil when it needs none or its format has no library; a photo its decoder refuses,
    /// or that makes its worker fail, throws the problem to answer the upload with.
    func thumbnail(of image: InspectedImage) async throws(ImageProblem) -> EncodedImage? {
        guard PhotoSize.thumbnailDimensions(width: image.width, height: image.height) != nil else { return nil }
        let job = ImageWorkerJob(
            format: image.format, width: image.width, height: image.height, decodedWhole: image.decodedWhole, limits: settings.limits)
        guard let input = ImageWorkerFrame.encode(job, bytes: image.bytes) else { throw .notDecodable("it could not be handed to a decoder") }
        await slots.acquire()
        let run: WorkerRun
        do {
            run = try await Self.launch(settings, input: input)
        } catch {
            await slots.release()
            throw .notDecodable("its decoder could not be started")
        }
        await slots.release()
        return try Self.result(of: run)
    }

    /// What a finished worker's output and exit mean for the upload.
    static func result(of run: WorkerRun) throws(ImageProblem) -> EncodedImage? {
        guard run.exitedNormally, run.status == 0, let (answer, bytes) = ImageWorkerFrame.decode(ImageWorkerAnswer.self, from: run.output) else {
            throw .notDecodable(run.timedOut ? "decoding it took too long" : "decoding it needed more than the limits allow")
        }
        switch answer.outcome {
        case .thumbnail:
            guard let format = answer.format, let width = answer.width, let height = answer.height, !bytes.isEmpty else {
                throw .notDecodable("its decoder answered nothing usable")
            }
            return EncodedImage(format: format, width: width, height: height, bytes: bytes)
        case .none, .undecodable:
            // A photo its library refuses outright (as it would any damaged file) is kept without a thumbnail, as a
            // photo of a format with no library here is: the structure walk has accepted it already.
            return nil
        case .tooLarge:
            throw .decodedTooLarge(width: answer.width ?? 0, height: answer.height ?? 0)
        case .badRequest:
            throw .notDecodable("its decoder could not read the request")
        }
    }

    /// How a worker ended.
    struct WorkerRun: Sendable {
        var output: [UInt8]
        var exitedNormally: Bool
        var status: Int32
        var timedOut: Bool
    }

    /// Runs one worker on a thread of its own (it blocks on the pipes), feeding it `input` and reading its output to
    /// the end; killed when it passes the deadline.
    private static func launch(_ settings: Settings, input: [UInt8]) async throws -> WorkerRun {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try run(settings, input: input) })
            }
        }
    }

    private static func run(_ settings: Settings, input: [UInt8]) throws -> WorkerRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: settings.executable)
        process.arguments = [
            ImageWorker.subcommand, "--memory-bytes", String(settings.memoryBytes), "--cpu-seconds", String(settings.cpuSeconds),
        ]
        // No crash report (Swift's backtracer would take seconds), one malloc arena (each arena reserves address
        // space the limit counts), nothing else of the server's environment (its secrets).
        process.environment = ["SWIFT_BACKTRACE": "enable=no", "MALLOC_ARENA_MAX": "1", "PATH": "/usr/bin:/bin"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let timedOut = TimedOutFlag()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem {
            timedOut.set()
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(settings.deadline.components.seconds)), execute: watchdog)
        defer { watchdog.cancel() }
        // A worker that died early makes the write fail (EPIPE): its exit says why.
        try? stdin.fileHandleForWriting.write(contentsOf: Data(input))
        try? stdin.fileHandleForWriting.close()
        let output = (try? stdout.fileHandleForReading.readToEnd()).map { [UInt8]($0) } ?? []
        process.waitUntilExit()
        return WorkerRun(
            output: output, exitedNormally: process.terminationReason == .exit, status: process.terminationStatus, timedOut: timedOut.value)
    }

    /// Set once by the watchdog, read after the worker has ended.
    private final class TimedOutFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var isSet = false
        func set() { lock.withLock { isSet = true } }
        var value: Bool { lock.withLock { isSet } }
    }
}

/// A counting semaphore for workers: `acquire` waits (in order) while every slot is taken.
actor WorkerSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
