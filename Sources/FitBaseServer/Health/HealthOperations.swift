import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The caller's health samples, summaries and the audit trail of who touched them. Everything is the caller's own.
protocol HealthOperations: FeatureOperations { var healthFeature: HealthFeature { get } }

extension HealthOperations {
    func uploadHealthSamples(_ input: Operations.UploadHealthSamples.Input) async throws -> Operations.UploadHealthSamples.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard body.samples.count <= HealthRecords.maximumBatch else {
            throw Problem.batchTooLarge("samples", maximum: HealthRecords.maximumBatch, noun: "samples", request: "An upload")
        }
        try await healthFeature.records.requireConsent(of: caller.user, toUpload: true, resource: .healthSamples)
        // HealthKit's cycle samples among them become signals and periods, on their day in the user's time zone.
        let cycle: HealthRecords.CycleSamples? = body.samples.contains { HealthKitCycleImport.uploadTypes[$0._type] != nil }
            ? .init(importer: healthFeature.cycleSamples, timeZone: try await healthFeature.profiles.profile(of: caller.user).timeZone) : nil
        let outcomes = try await healthFeature.records.upload(body.samples.map(HealthWire.input), by: caller.user, now: clock.now, cycle: cycle)
        return .ok(.init(body: .json(.init(
            results: outcomes.map { outcome in
                .init(id: outcome.id, status: HealthWire.wire(outcome.status), problem: outcome.problem?.wire(instance: "/v1/health/samples"))
            },
            created: outcomes.count { $0.status == .created }, duplicates: outcomes.count { $0.status == .duplicate },
            rejected: outcomes.count { $0.status == .rejected }
        ))))
    }

    func listHealthSamples(_ input: Operations.ListHealthSamples.Input) async throws -> Operations.ListHealthSamples.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let type = try input.query._type.map { try Self.type($0.rawValue) }
        try Self.checkRange(from: input.query.from, to: input.query.to)
        try await healthFeature.records.requireConsent(of: caller.user, toUpload: false, resource: .healthSamples)
        let samples = try await healthFeature.records.samples(of: caller.user, type: type, from: input.query.from, to: input.query.to, offset: offset, limit: limit + 1)
        return .ok(.init(body: .json(.init(
            items: samples.prefix(limit).map(HealthWire.wire), nextCursor: samples.count > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    func deleteHealthSample(_ input: Operations.DeleteHealthSample.Input) async throws -> Operations.DeleteHealthSample.Output {
        let caller = try RequestScope.requireCaller()
        try await healthFeature.records.requireConsent(of: caller.user, toUpload: false, resource: .healthSamples)
        guard let id = HealthSampleID(input.path.sampleId), try await healthFeature.records.delete(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No health sample \(input.path.sampleId) of yours.")
        }
        return .noContent(.init())
    }

    func getHealthSummary(_ input: Operations.GetHealthSummary.Input) async throws -> Operations.GetHealthSummary.Output {
        let caller = try RequestScope.requireCaller()
        let type = try Self.type(input.query._type.rawValue)
        let (from, to) = try summaryRange(from: input.query.from, to: input.query.to)
        let bucket = input.query.bucket ?? .day
        try await healthFeature.records.requireConsent(of: caller.user, toUpload: false, resource: .healthSummary)
        let timeZone = LocalCalendar.timeZone(try await healthFeature.profiles.profile(of: caller.user).timeZone)
        let buckets = try await healthFeature.records.summary(of: caller.user, type: type, from: from, to: to, bucket: bucket, timeZone: timeZone)
        return .ok(.init(body: .json(.init(
            _type: type, bucket: bucket, timeZone: timeZone.identifier,
            from: from, to: to, buckets: buckets.map(HealthWire.wire)
        ))))
    }

    func getHealthOverview(_ input: Operations.GetHealthOverview.Input) async throws -> Operations.GetHealthOverview.Output {
        let caller = try RequestScope.requireCaller()
        let (from, to) = try summaryRange(from: input.query.from, to: input.query.to)
        let bucket = input.query.bucket ?? .day
        try await healthFeature.records.requireConsent(of: caller.user, toUpload: false, resource: .healthSummary)
        let timeZone = LocalCalendar.timeZone(try await healthFeature.profiles.profile(of: caller.user).timeZone)
        let overview = try await healthFeature.records.overview(of: caller.user, from: from, to: to, bucket: bucket, timeZone: timeZone)
        return .ok(.init(body: .json(.init(
            timeZone: timeZone.identifier, from: from, to: to, bucket: bucket,
            summaries: overview.summaries.map { summary in
                .init(_type: summary.type, bucket: bucket, timeZone: timeZone.identifier, from: from, to: to, buckets: summary.buckets.map(HealthWire.wire))
            },
            latest: overview.latest.map(HealthWire.wire)
        ))))
    }

    func listMyAuditEntries(_ input: Operations.ListMyAuditEntries.Input) async throws -> Operations.ListMyAuditEntries.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let entries = try await healthFeature.records.audit.entries(about: caller.user, offset: offset, limit: limit + 1)
        return .ok(.init(body: .json(.init(
            items: entries.prefix(limit).map { entry in
                .init(
                    seq: entry.seq, at: entry.at, actorId: entry.actorID?.uuidString.lowercased(), subjectId: entry.subjectID.uuidString.lowercased(),
                    action: entry.action, resource: entry.resource, count: entry.count, requestId: entry.requestID,
                    clientRequestId: entry.clientRequestID, outcome: entry.outcome,
                    prevHash: entry.prevHash, hash: entry.hash
                )
            },
            nextCursor: entries.count > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    // MARK: Mapping

    static func type(_ text: String) throws(Problem) -> HealthSampleType {
        guard let type = HealthSampleType(rawValue: text) else {
            throw Problem.invalidRequest("type is not a health sample type.", fieldErrors: [.init(field: "type", message: "must be one of \(HealthSampleType.allCases.map(\.rawValue).joined(separator: ", "))")])
        }
        return type
    }

    /// A summary's range: `to` defaults to now, `from` to 7 days before it; at most 400 days.
    func summaryRange(from: Date?, to: Date?) throws(Problem) -> (from: Date, to: Date) {
        let to = to ?? clock.now
        let from = from ?? to.addingTimeInterval(-7 * 86_400)
        try Self.checkRange(from: from, to: to)
        guard to.timeIntervalSince(from) <= 400 * 86_400 else {
            throw Problem.invalidRequest("A summary covers at most 400 days.", fieldErrors: [.init(field: "from", message: "must be at most 400 days before to")])
        }
        return (from, to)
    }

    static func checkRange(from: Date?, to: Date?) throws(Problem) {
        if let from, let to, from >= to {
            throw Problem.invalidRequest("from must be before to.", fieldErrors: [.init(field: "from", message: "must be before to")])
        }
    }

}
