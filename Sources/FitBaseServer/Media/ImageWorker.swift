import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The image worker: `fitbase image-worker`, a process of the server's own binary that decodes one photo and makes its
/// thumbnail under resource limits, so that a decompression bomb or a decoder bug costs that upload, never the server.
///
/// It limits itself before it reads a byte (address space, CPU seconds, no core file), reads one ``ImageWorkerJob`` and
/// the photo's bytes from standard input, and writes one ``ImageWorkerAnswer`` and the thumbnail's bytes to standard
/// output. Both messages are framed the same way: the header's length (4 bytes, big-endian), the header as JSON, then
/// the bytes to the end of the stream.
package enum ImageWorker {
    /// The subcommand that runs a worker.
    package static let subcommand = "image-worker"

    /// Runs one job from standard input to standard output; the process's exit status.
    package static func run(memoryBytes: Int, cpuSeconds: Int) -> Int32 {
        limit(RLIMIT_CORE, to: 0)
        limit(RLIMIT_CPU, to: cpuSeconds)
        limit(RLIMIT_AS, to: memoryBytes)
        let input = (try? FileHandle.standardInput.readToEnd()).map { [UInt8]($0) } ?? []
        let answer: ImageWorkerAnswer
        var thumbnailBytes: [UInt8] = []
        if let (job, bytes) = ImageWorkerFrame.decode(ImageWorkerJob.self, from: input) {
            let image = InspectedImage(
                format: job.format, width: job.width, height: job.height, bytes: bytes, decodedWhole: job.decodedWhole)
            do throws(DecodeFailure) {
                let thumbnailer = PhotoThumbnailer(libraries: .shared, limits: job.limits)
                if let thumbnail = try thumbnailer.thumbnail(of: image) {
                    answer = .init(outcome: .thumbnail, format: thumbnail.format, width: thumbnail.width, height: thumbnail.height)
                    thumbnailBytes = thumbnail.bytes
                } else {
                    answer = .init(outcome: .none)
                }
            } catch .tooLarge(let size) {
                answer = .init(outcome: .tooLarge, width: size.width, height: size.height)
            } catch {
                answer = .init(outcome: .undecodable)
            }
        } else {
            answer = .init(outcome: .badRequest)
        }
        guard let output = ImageWorkerFrame.encode(answer, bytes: thumbnailBytes) else { return 70 }
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(output))
        } catch {
            return 74
        }
        return 0
    }

    #if canImport(Glibc)
    private static func limit(_ resource: __rlimit_resource, to value: Int) {
        var limits = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        _ = setrlimit(__rlimit_resource_t(resource.rawValue), &limits)
    }
    #else
    private static func limit(_ resource: Int32, to value: Int) {
        var limits = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        _ = setrlimit(resource, &limits)
    }
    #endif
}

/// What the server asks of a worker: the checked photo's format and size, and what its decoder may build.
struct ImageWorkerJob: Codable, Equatable {
    let format: ImageFormat
    let width: Int
    let height: Int
    let decodedWhole: Bool
    let limits: DecodeLimits
}

/// What a worker answers.
struct ImageWorkerAnswer: Codable, Equatable {
    enum Outcome: String, Codable {
        /// A thumbnail follows the header.
        case thumbnail
        /// The photo needs no thumbnail, or this machine has no library for its format.
        case none
        /// The decoder reads a size past the limits (`width` and `height` say which).
        case tooLarge
        /// The decoder refused the photo (as damaged, or of a kind it does not read).
        case undecodable
        /// The job itself could not be read.
        case badRequest
    }

    var outcome: Outcome
    var format: ImageFormat?
    var width: Int?
    var height: Int?
}

extension ImageFormat: Codable {}

/// The framing of both messages: a 4-byte big-endian header length, the header as JSON, then the payload.
enum ImageWorkerFrame {
    /// The longest header accepted (a header is a few dozen bytes).
    static let maxHeader = 4096

    static func encode(_ header: some Encodable, bytes: [UInt8]) -> [UInt8]? {
        guard let json = try? JSONEncoder().encode(header), json.count <= maxHeader else { return nil }
        let length = UInt32(json.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + json + bytes
    }

    /// The header and the payload; nil when the frame is cut off, too long or not the expected header.
    static func decode<Header: Decodable>(_ type: Header.Type, from frame: [UInt8]) -> (Header, [UInt8])? {
        guard frame.count >= 4 else { return nil }
        let length = Int(frame[0]) << 24 | Int(frame[1]) << 16 | Int(frame[2]) << 8 | Int(frame[3])
        guard length <= maxHeader, length <= frame.count - 4,
            let header = try? JSONDecoder().decode(Header.self, from: Data(frame[4..<(4 + length)]))
        else { return nil }
        return (header, Array(frame[(4 + length)...]))
    }
}
