import FitBaseAPI
import FitBaseCore
import Foundation

/// Uploads what HealthKit recorded to the signed-in user's account, type by type, in batches of at most
/// ``HealthUploadBatch/maximumCount`` samples, each type from the anchor it last uploaded up to.
///
/// ```swift
/// let uploader = HealthSampleUploader(client: fitbase, store: store, source: HealthKitAnchoredSource())
/// let progress = await uploader.run { progress in print(progress.state, progress.created) }
/// ```
///
/// A crash never loses nor doubles a sample: each batch is kept in the sealed ``LocalStore`` before it is sent, and
/// its anchor saved (with the batch forgotten, in one transaction) only once the server has answered. The next run
/// sends a batch left behind first; the server knows samples by their HealthKit UUID, so those it stored before the
/// crash come back `duplicate` and nothing is stored twice. Without the `healthData` consent, or with the account's
/// sample quota reached, the run stops in ``Progress/State/consentRequired`` or ``Progress/State/quotaExceeded`` and
/// sends nothing more until it is run again. Values are never logged.
public actor HealthSampleUploader {
    /// Where a run is, and what the server did with what it sent.
    public struct Progress: Sendable, Equatable {
        /// What the uploader is doing.
        public enum State: Sendable, Equatable {
            /// Not run yet.
            case idle
            /// Reading and sending samples of this type.
            case uploading(HealthSampleType)
            /// Reading and sending cycle samples of this kind (after the five types), which become fertility signals and
            /// periods on the server.
            case uploadingCycle(HealthKitCycleKind)
            /// Everything HealthKit had is on the server.
            case upToDate
            /// The user has not consented to health data (or withdrew): nothing is sent until a run after consenting.
            case consentRequired
            /// The account holds as many samples as it may: nothing more is sent.
            case quotaExceeded
            /// HealthKit could not be read (not authorized, the device locked): the next run resumes.
            case sourceFailed(String)
            /// The run stopped on this failure (offline, signed out, the device's store failed); the next run resumes.
            case failed(FitBaseError)
        }

        /// What the uploader is doing, or why it stopped.
        public var state: State
        /// Samples the server stored for the first time in this run.
        public var created: Int
        /// Samples the server already had (sent again after an interrupted run).
        public var duplicates: Int
        /// Samples the server refused (an impossible value); they are not sent again.
        public var rejected: Int
        /// The types whose samples are all on the server, in the order they were done.
        public var completedTypes: [HealthSampleType]
        /// The kinds of cycle sample all on the server, in the order they were done.
        public var completedCycleKinds: [HealthKitCycleKind] = []

        /// Progress of the given parts.
        public init(state: State = .idle, created: Int = 0, duplicates: Int = 0, rejected: Int = 0, completedTypes: [HealthSampleType] = []) {
            self.state = state
            self.created = created
            self.duplicates = duplicates
            self.rejected = rejected
            self.completedTypes = completedTypes
        }

        /// Samples the server has from this run, new or not.
        public var uploaded: Int { created + duplicates }
        /// The share of the five types and five kinds of cycle sample done, 0 to 1.
        public var fractionCompleted: Double {
            Double(completedTypes.count + completedCycleKinds.count) / Double(HealthSampleType.allCases.count + HealthKitCycleKind.allCases.count)
        }
    }

    private let client: FitBaseClient
    private let store: LocalStore
    private let source: any HealthKitSource
    private let batchSize: Int
    /// The last run's progress (``Progress/State/idle`` before the first).
    public private(set) var progress = Progress()
    private var running: Task<Progress, Never>?

    /// An uploader of `source`'s samples to `client`'s user, keeping its place in `store`, reading at most `batchSize`
    /// samples (at most ``HealthUploadBatch/maximumCount``) per upload.
    public init(client: FitBaseClient, store: LocalStore, source: any HealthKitSource, batchSize: Int = HealthUploadBatch.maximumCount) {
        self.client = client
        self.store = store
        self.source = source
        self.batchSize = min(max(batchSize, 1), HealthUploadBatch.maximumCount)
    }

    /// Uploads everything HealthKit added since the last run, calling `onProgress` at each step; returns where it
    /// ended. A call while a run is going waits for that run instead of starting another.
    @discardableResult
    public func run(onProgress: @escaping @Sendable (Progress) async -> Void = { _ in }) async -> Progress {
        if let running { return await running.value }
        let task = Task { await self.upload(onProgress) }
        running = task
        let outcome = await task.value
        running = nil
        return outcome
    }

    /// How a run stopped before it was done.
    private struct Stop: Error {
        var state: Progress.State
    }

    private func upload(_ onProgress: @Sendable (Progress) async -> Void) async -> Progress {
        progress = Progress(state: .uploading(HealthSampleType.allCases[0]))
        await onProgress(progress)
        do throws(Stop) {
            if let pending = try await storage({ try await self.store.pendingHealthBatch() }) {
                progress.state = .uploading(pending.type)
                await onProgress(progress)
                try await send(pending)
            }
            for type in HealthSampleType.allCases {
                progress.state = .uploading(type)
                await onProgress(progress)
                try await uploadNew(of: type, onProgress)
                progress.completedTypes.append(type)
            }
            for kind in HealthKitCycleKind.allCases {
                progress.state = .uploadingCycle(kind)
                await onProgress(progress)
                try await uploadNewCycleSamples(of: kind, onProgress)
                progress.completedCycleKinds.append(kind)
            }
            progress.state = .upToDate
        } catch {
            progress.state = error.state
        }
        await onProgress(progress)
        return progress
    }

    /// Reads and sends `type`'s new samples batch by batch until HealthKit has no more.
    private func uploadNew(of type: HealthSampleType, _ onProgress: @Sendable (Progress) async -> Void) async throws(Stop) {
        while true {
            let anchor = try await storage { try await self.store.healthAnchor(of: type) }
            let changes: HealthKitChanges
            do {
                changes = try await source.samples(of: type, after: anchor, limit: batchSize)
            } catch {
                throw Stop(state: .sourceFailed(String(describing: error)))
            }
            // The anchor follows every sample returned: a source that returned more than asked cannot be sent in part.
            guard changes.samples.count <= batchSize else {
                throw Stop(state: .sourceFailed("\(changes.samples.count) samples of \(type.rawValue) returned for a limit of \(batchSize)"))
            }
            let samples = changes.samples
            if samples.isEmpty {
                if changes.anchor != anchor { try await storage { try await self.store.setHealthAnchor(changes.anchor, of: type) } }
            } else {
                let batch = LocalStore.PendingHealthBatch(type: type, samples: samples, anchor: changes.anchor)
                try await storage { try await self.store.beginHealthBatch(batch) }
                try await send(batch)
                await onProgress(progress)
            }
            guard changes.hasMore else { return }
        }
    }

    /// Reads and sends `kind`'s new cycle samples batch by batch until HealthKit has no more. They are not kept before
    /// they are sent: the server replaces what a cycle sample made when it comes again, so after a crash the batch is
    /// read and sent again from the anchor before it.
    private func uploadNewCycleSamples(of kind: HealthKitCycleKind, _ onProgress: @Sendable (Progress) async -> Void) async throws(Stop) {
        while true {
            let anchor = try await storage { try await self.store.cycleAnchor(of: kind) }
            // Wrist temperatures come with up to 30 earlier nights, and the upload must still fit one batch.
            let context = kind == .sleepingWristTemperature ? 30 : 0
            let limit = max(1, min(batchSize, HealthUploadBatch.maximumCount - context))
            let changes: HealthKitCycleChanges
            do {
                changes = try await source.cycleSamples(of: kind, after: anchor, limit: limit)
            } catch {
                throw Stop(state: .sourceFailed(String(describing: error)))
            }
            guard changes.samples.count <= limit + context else {
                throw Stop(state: .sourceFailed("\(changes.samples.count) samples of \(kind.rawValue) returned for a limit of \(limit)"))
            }
            if !changes.samples.isEmpty {
                let result: HealthUploadResult
                do {
                    result = try await client.uploadHealthSamples(inputs: changes.samples)
                } catch {
                    throw Self.stop(error)
                }
                progress.created += result.created
                progress.duplicates += result.duplicates
                progress.rejected += result.rejected
            }
            if changes.anchor != anchor { try await storage { try await self.store.setCycleAnchor(changes.anchor, of: kind) } }
            if !changes.samples.isEmpty { await onProgress(progress) }
            guard changes.hasMore else { return }
        }
    }

    /// How a failed upload stops the run.
    private static func stop(_ error: FitBaseError) -> Stop {
        switch error {
        case .problem(let problem) where problem.code == .consentRequired: Stop(state: .consentRequired)
        case .problem(let problem) where problem.code == .quotaExceeded: Stop(state: .quotaExceeded)
        default: Stop(state: .failed(error))
        }
    }

    /// Sends a kept batch and, once the server has answered, moves its type's anchor on.
    private func send(_ batch: LocalStore.PendingHealthBatch) async throws(Stop) {
        let result: HealthUploadResult
        do {
            result = try await client.uploadHealthSamples(batch.samples)
        } catch {
            throw Self.stop(error)
        }
        try await storage { try await self.store.finishHealthBatch(batch) }
        progress.created += result.created
        progress.duplicates += result.duplicates
        progress.rejected += result.rejected
    }

    /// Runs a local-store step; its failure stops the run.
    private func storage<T>(_ operation: () async throws -> T) async throws(Stop) -> T {
        do {
            return try await operation()
        } catch {
            throw Stop(state: .failed(.storage(String(describing: error))))
        }
    }
}
