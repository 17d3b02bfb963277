import Foundation
import Synchronization

/// Prints each event on one line (debug builds, command-line tools): `[analytics] group_joined source=link`.
public struct ConsoleAnalyticsSink: AnalyticsService {
    private let write: @Sendable (String) -> Void

    /// A sink writing to standard output, or to `write`.
    public init(write: @escaping @Sendable (String) -> Void = { print($0) }) {
        self.write = write
    }

    public func track(_ event: AnalyticsEvent) {
        let parameters = event.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        write((["[analytics]", event.name] + parameters).joined(separator: " "))
    }

    public func flush() async {}
}

/// An event as a batch carries it.
public struct AnalyticsRecord: Sendable, Equatable, Codable {
    /// The event's id, made when it is recorded: a batch sent again after a lost answer is counted once.
    public var id: UUID
    public var name: String
    public var parameters: [String: String]
    public var timestamp: Date

    /// Makes a record.
    public init(id: UUID = UUID(), name: String, parameters: [String: String], timestamp: Date) {
        self.id = id
        self.name = name
        self.parameters = parameters
        self.timestamp = timestamp
    }

    private enum CodingKeys: String, CodingKey { case id, name, parameters, timestamp }

    /// Reads a record, also one queued by a version that kept no id (it gets one now).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(UUID.self, forKey: .id) ?? UUID()
        name = try container.decode(String.self, forKey: .name)
        parameters = try container.decode([String: String].self, forKey: .parameters)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
    }
}

/// Sends batches of events to an analytics back end: FitBase's own (``FitBaseAnalyticsUploader``) or another.
public protocol AnalyticsUploader: Sendable {
    /// Sends `batch`; throws when it did not arrive (the batch is kept and sent again).
    func upload(_ batch: [AnalyticsRecord]) async throws
}

/// Queues events and sends them in batches: when ``Configuration/batchSize`` are waiting, every
/// ``Configuration/flushInterval``, and on ``flush()``. A batch that fails stays queued for the next try; the queue
/// is bounded (the oldest events are dropped past ``Configuration/capacity``) and kept in a file when one is given, so
/// events recorded offline survive a relaunch.
public final class BatchingAnalyticsSink: AnalyticsService {
    /// The sink's limits.
    public struct Configuration: Sendable {
        /// Events per batch, and the queue length that triggers a send.
        public var batchSize = 20
        /// The longest an event waits before a send is tried.
        public var flushInterval: Duration = .seconds(30)
        /// The most events kept; older ones are dropped first.
        public var capacity = 1_000

        /// The defaults: batches of 20, every 30 seconds, at most 1,000 kept.
        public init(batchSize: Int = 20, flushInterval: Duration = .seconds(30), capacity: Int = 1_000) {
            self.batchSize = batchSize
            self.flushInterval = flushInterval
            self.capacity = capacity
        }
    }

    private struct State {
        var queue: [AnalyticsRecord] = []
        var sending = false
        var timer: Task<Void, Never>?
        var dropped = 0
    }

    private let uploader: any AnalyticsUploader
    private let clock: any KitClock
    private let configuration: Configuration
    private let queueFile: URL?
    private let state = Mutex(State())

    /// A sink sending through `uploader`, keeping its queue in `queueFile` (mode 0600) when given.
    public init(uploader: any AnalyticsUploader, configuration: Configuration = .init(), queueFile: URL? = nil, clock: any KitClock = SystemKitClock()) {
        self.uploader = uploader
        self.configuration = configuration
        self.queueFile = queueFile
        self.clock = clock
        if let queueFile, let data = try? Data(contentsOf: queueFile), let saved = try? JSONDecoder().decode([AnalyticsRecord].self, from: data) {
            state.withLock { $0.queue = Array(saved.suffix(configuration.capacity)) }
        }
    }

    /// The events waiting to be sent, oldest first.
    public var pending: [AnalyticsRecord] { state.withLock { $0.queue } }

    /// Events dropped because the queue was full.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    public func track(_ event: AnalyticsEvent) {
        let record = AnalyticsRecord(name: event.name, parameters: event.parameters, timestamp: clock.now)
        let (full, startTimer) = state.withLock { state -> (Bool, Bool) in
            state.queue.append(record)
            if state.queue.count > configuration.capacity {
                state.dropped += state.queue.count - configuration.capacity
                state.queue.removeFirst(state.queue.count - configuration.capacity)
            }
            let startTimer = state.timer == nil
            if startTimer { state.timer = Task {} }
            return (state.queue.count >= configuration.batchSize, startTimer)
        }
        save()
        if startTimer { armTimer() }
        if full { Task { await self.flush() } }
    }

    private func armTimer() {
        let timer = Task { [weak self, clock, configuration] in
            try? await clock.sleep(for: configuration.flushInterval)
            guard let self, !Task.isCancelled else { return }
            self.state.withLock { $0.timer = nil }
            await self.flush()
        }
        state.withLock { $0.timer = timer }
    }

    /// Sends everything queued, batch by batch, stopping at the first failure (what failed stays queued).
    public func flush() async {
        let claimed = state.withLock { state -> Bool in
            guard !state.sending else { return false }
            state.sending = true
            return true
        }
        guard claimed else { return }
        defer {
            let rearm = state.withLock { state -> Bool in
                state.sending = false
                return !state.queue.isEmpty && state.timer == nil
            }
            if rearm { armTimer() }
        }
        while true {
            let batch = state.withLock { Array($0.queue.prefix(configuration.batchSize)) }
            guard !batch.isEmpty else { return }
            do {
                try await uploader.upload(batch)
            } catch {
                return
            }
            state.withLock { state in
                // Events dropped for capacity while sending may have shifted the queue: remove the sent ones by value.
                var remaining = batch[...]
                state.queue.removeAll { record in
                    guard let first = remaining.first, first == record else { return false }
                    remaining = remaining.dropFirst()
                    return true
                }
            }
            save()
        }
    }

    private func save() {
        guard let queueFile else { return }
        let queue = state.withLock { $0.queue }
        guard let data = try? JSONEncoder().encode(queue) else { return }
        if !FileManager.default.fileExists(atPath: queueFile.path) {
            try? FileManager.default.createDirectory(at: queueFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: queueFile.path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        try? data.write(to: queueFile)
    }
}
