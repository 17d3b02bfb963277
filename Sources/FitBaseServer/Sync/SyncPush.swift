import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// `POST /v1/sync/push`: mutations a device made offline.
///
/// A push runs in two steps. First every mutation is checked outside any transaction, exactly as its REST endpoint
/// checks a body (catalog references, dates, ranges), giving either the write to make or the problem; what that
/// reads (profile, periods, catalog workouts) is read once per push. Then one transaction applies them in order: a
/// replayed `mutationId` (stored earlier, or earlier in the same push) returns its first result, otherwise the
/// collection's ``ConflictPolicy`` settles the write against the record's stamp in the feed, the write and its feed
/// entry are made, and the result is stored under the `mutationId`. Only a period can fail on a constraint (another
/// period starting the same day), so only its write runs inside a savepoint, rolled back to reject it alone.
extension SyncController {
    static let maximumMutations = 500

    func pushSyncMutations(_ input: Operations.PushSyncMutations.Input) async throws -> Operations.PushSyncMutations.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard body.mutations.count <= Self.maximumMutations else {
            throw Problem.batchTooLarge("mutations", maximum: Self.maximumMutations, noun: "mutations", request: "A push")
        }
        let user = caller.user
        let now = Date.storageNow
        // What checking reads is read once per push: the profile, the periods (for logs' cycle positions), the
        // catalog workouts named.
        let sendsSamples = body.mutations.contains { $0.collection == .healthSamples }
        let context = CheckContext(
            user: user, profile: try await profiles.profile(of: user),
            periods: body.mutations.contains { $0.collection == .workoutLogs && $0.op == .upsert } ? try await cycle.store.periods(of: user) : [],
            workouts: CatalogLookup(store: plans.catalog),
            healthConsent: sendsSamples ? try await healthConsent(of: user, auditing: body.mutations) : (upload: false, read: false),
            healthKey: body.mutations.contains { $0.collection == .healthSamples && $0.op == .upsert }
                ? try await health.vault.dataKey(of: user, creating: true) : nil
        )
        var pending: [PendingMutation] = []
        pending.reserveCapacity(body.mutations.count)
        for (index, mutation) in body.mutations.enumerated() {
            pending.append(try await prepare(mutation, at: index, context: context, now: now))
        }
        let prepared = pending
        // A plan the push creates beyond what the caller's tier keeps is rejected as its REST request would be.
        // The tier is asked only when the push writes plans.
        var limited = false
        if body.mutations.contains(where: { $0.collection == .plans && $0.op == .upsert }) {
            limited = try await !plans.entitlements.allows(.customPlans, caller: caller)
        }
        let applying = ApplyContext(
            user: user, now: now, health: health, engine: database.engine,
            planLimit: limited ? (plans: PlanController.plansWithoutCustomPlans, problem: plans.morePlansRequireUpgrade()) : nil
        )
        let results = try await database.transaction { db in
            // Holding the user's sequence row for the whole push orders concurrent pushes of one user (PostgreSQL),
            // so a mutation id's stored result is always seen by a later push.
            try await SyncFeed.lockSequence(of: user, on: db)
            var answered = try await Self.storedResults(of: prepared.map(\.mutationID), user: user, on: db)
            var results: [Components.Schemas.SyncMutationResult] = []
            results.reserveCapacity(prepared.count)
            for mutation in prepared {
                if let earlier = answered[mutation.mutationID] {
                    results.append(earlier)
                    continue
                }
                let result = try await Self.apply(mutation, context: applying, on: db)
                if result.status != .rejected || !Self.isUnkeyed(mutation) { answered[mutation.mutationID] = result }
                results.append(result)
            }
            let samples = zip(prepared, results).count { $0.0.collection == .healthSamples && $0.1.status != .rejected }
            if samples > 0 {
                try await AuditLog.append(AuditEvent(actor: user, subject: user, action: .sync, resource: "healthSamples", count: samples), on: db, engine: applying.engine)
            }
            return results
        }
        return .ok(.init(body: .json(.init(results: results))))
    }

    // MARK: Checking

    /// A mutation checked and ready to apply.
    struct PendingMutation: Sendable {
        enum Write: Sendable {
            case plan(TrainingPlan)
            case workoutLog(WorkoutLog)
            case period(LoggedPeriod)
            case preferences(Components.Schemas.UserUpdate)
            case healthSample(SealedSample)
            case delete
        }

        enum Outcome: Sendable {
            case write(Write)
            case rejected(Problem)
        }

        /// Its place in the push, for field paths.
        var index: Int
        var mutationID: String
        var collection: SyncCollection
        /// The record id in its canonical form (lower-case UUID, or `profile`).
        var recordID: String
        var operation: SyncOperation
        var baseVersion: Int?
        /// The client's `updatedAt`, no later than the server's clock.
        var updatedAt: Date
        var outcome: Outcome
    }

    /// What checking a push's mutations needs, read once.
    struct CheckContext: Sendable {
        var user: UserID
        var profile: Profile
        var periods: [LoggedPeriod]
        var workouts: CatalogLookup
        /// Whether the `healthData` consent allows uploading now, and reading (deleting) at all.
        var healthConsent: (upload: Bool, read: Bool)
        /// The user's data key, when the push uploads health samples.
        var healthKey: HealthVault.DataKey?
    }

    /// What applying a push's mutations needs.
    struct ApplyContext: Sendable {
        var user: UserID
        var now: Date
        var health: HealthRecords
        var engine: DatabaseEngine
        /// Set when the caller's tier keeps a limited number of plans.
        var planLimit: (plans: Int, problem: Problem)?
    }

    /// The `healthData` consent as it stands; refused health mutations are audited as denied, as REST refusals are.
    private func healthConsent(of user: UserID, auditing mutations: [Components.Schemas.SyncMutation]) async throws -> (upload: Bool, read: Bool) {
        let consent = try await health.consent(of: user)
        let refused = mutations.filter { $0.collection == .healthSamples && !($0.op == .upsert ? consent.upload : consent.read) }.count
        if refused > 0 {
            try await health.audit.append(AuditEvent(actor: user, subject: user, action: .sync, resource: "healthSamples", count: refused, outcome: .denied))
        }
        return consent
    }

    private static let healthConsentRequired = Problem(
        .forbidden, code: "consent_required", detail: "Health samples need the healthData consent: POST /v1/me/consents {kind: healthData, granted: true}."
    )

    private func prepare(_ mutation: Components.Schemas.SyncMutation, at index: Int, context: CheckContext, now: Date) async throws -> PendingMutation {
        // The generated enums have the same cases as FitBaseCore's.
        let collection = SyncCollection(rawValue: mutation.collection.rawValue) ?? .plans
        let operation = SyncOperation(rawValue: mutation.op.rawValue) ?? .upsert
        var pending = PendingMutation(
            index: index, mutationID: mutation.mutationId, collection: collection, recordID: mutation.id, operation: operation,
            baseVersion: mutation.baseVersion, updatedAt: min(mutation.updatedAt, now), outcome: .write(.delete)
        )
        do {
            let (recordID, write) = try await checked(mutation, collection: collection, operation: operation, context: context, updatedAt: pending.updatedAt)
            pending.recordID = recordID
            pending.outcome = .write(write)
        } catch let problem as Problem {
            pending.outcome = .rejected(problem.prefixingFields(with: "mutations[\(index)]."))
        }
        return pending
    }

    /// The canonical record id and the write, or the problem with field paths relative to the mutation.
    private func checked(
        _ mutation: Components.Schemas.SyncMutation, collection: SyncCollection, operation: SyncOperation, context: CheckContext, updatedAt: Date
    ) async throws -> (String, PendingMutation.Write) {
        let profile = context.profile
        if mutation.mutationId.isEmpty || mutation.mutationId.count > 100 {
            throw Problem.invalidRequest("mutationId must be 1–100 characters.", fieldErrors: [.init(field: "mutationId", message: "must be 1–100 characters")])
        }
        if let base = mutation.baseVersion, base < 1 {
            throw Problem.invalidRequest("baseVersion starts at 1.", fieldErrors: [.init(field: "baseVersion", message: "must be at least 1")])
        }
        let uuid: UUID
        if collection == .preferences {
            guard mutation.id == SyncFeed.preferencesID else {
                throw Self.notThePreferencesID
            }
            guard operation == .upsert else {
                throw Problem.invalidRequest("Preferences cannot be deleted.", fieldErrors: [.init(field: "op", message: "must be upsert for preferences")])
            }
            let update = try Self.decode(Components.Schemas.UserUpdate.self, from: mutation.data)
            // A dry run against the current profile finds every invalid field now; the write applies it again.
            var copy = profile
            do {
                try ProfileUpdate.apply(update, to: &copy, today: LocalCalendar.today(in: profile.timeZone).description)
            } catch {
                throw error.prefixingFields(with: "data.")
            }
            return (SyncFeed.preferencesID, .preferences(update))
        } else if let parsed = UUID(uuidString: mutation.id) {
            uuid = parsed
        } else {
            throw Problem.invalidRequest("id must be a UUID.", fieldErrors: [.init(field: "id", message: "must be a UUID")])
        }
        let recordID = uuid.uuidString.lowercased()
        if collection == .healthSamples, !(operation == .upsert ? context.healthConsent.upload : context.healthConsent.read) {
            throw Self.healthConsentRequired
        }
        guard operation == .upsert else { return (recordID, .delete) }
        do {
            switch collection {
            case .plans:
                let body = try Self.decode(Components.Schemas.PlanInput.self, from: mutation.data)
                return (recordID, .plan(try await plans.validated(body, id: PlanID(rawValue: uuid), now: updatedAt, workouts: context.workouts)))
            case .workoutLogs:
                let body = try Self.decode(Components.Schemas.WorkoutLogInput.self, from: mutation.data)
                return (recordID, .workoutLog(try await history.validated(
                    body, id: WorkoutLogID(rawValue: uuid), user: context.user, profile: profile, periods: context.periods, workouts: context.workouts
                )))
            case .cycleLogs:
                let body = try Self.decode(Components.Schemas.PeriodInput.self, from: mutation.data)
                return (recordID, .period(try await cycle.validated(body, id: PeriodID(rawValue: uuid), user: context.user, profile: profile)))
            case .healthSamples:
                let body = try Self.decode(Components.Schemas.HealthSampleInput.self, from: mutation.data)
                var input = HealthController.input(body)
                input.id = recordID
                let sample: HealthSample
                switch HealthSampleValidator.validate(input, now: .now) {
                case .success(let valid): sample = valid
                case .failure(let failure): throw Problem.validationFailed(failure.errors.map { .init(field: $0.field, message: $0.message) })
                }
                guard let key = context.healthKey else { throw Self.healthConsentRequired }
                return (recordID, .healthSample(try health.seal(sample, of: context.user, with: key)))
            case .preferences:  // answered above; a UUID is never the preferences record's id
                throw Self.notThePreferencesID
            }
        } catch let problem as Problem where problem.code == "validation_failed" {
            throw problem.prefixingFields(with: "data.")
        }
    }

    private static let notThePreferencesID = Problem.invalidRequest(
        "The preferences record is \(SyncFeed.preferencesID).", fieldErrors: [.init(field: "id", message: "must be \"\(SyncFeed.preferencesID)\"")]
    )

    /// Decodes a mutation's `data` as the collection's REST body, naming the field at fault.
    static func decode<Body: Decodable>(_ type: Body.Type, from data: Components.Schemas.SyncMutation.DataPayload?) throws(Problem) -> Body {
        guard let data else {
            throw Problem.invalidRequest("data is required to upsert.", fieldErrors: [.init(field: "data", message: "is required to upsert")])
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.singleValueContainer()
                let text = try container.decode(String.self)
                guard let date = InternetTime.date(from: text) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be an RFC 3339 date-time")
                }
                return date
            }
            return try decoder.decode(Body.self, from: JSONEncoder().encode(data.additionalProperties))
        } catch let error as DecodingError {
            throw ProblemMapping.problem(forDecoding: error).prefixingFields(with: "data.")
        } catch {
            throw Problem.invalidRequest("data is not a JSON object.", fieldErrors: [.init(field: "data", message: "must be a JSON object")])
        }
    }

    // MARK: Applying

    /// A rejection for an unusable `mutationId`: answered, never stored (there is no key to store it under).
    private static func isUnkeyed(_ mutation: PendingMutation) -> Bool {
        guard case .rejected(let problem) = mutation.outcome else { return false }
        return problem.fieldErrors.contains { $0.field.hasSuffix("].mutationId") }
    }

    /// Applies one mutation on `db` and stores its result. Only a period can fail on a constraint (another period
    /// starting the same day), so only its write runs inside a savepoint, rolled back to reject it alone.
    private static func apply(_ mutation: PendingMutation, context: ApplyContext, on db: any SQLDatabase) async throws -> Components.Schemas.SyncMutationResult {
        if isUnkeyed(mutation), case .rejected(let problem) = mutation.outcome { return rejected(mutation, problem) }
        let result: Components.Schemas.SyncMutationResult
        if case .write(.period(let period)) = mutation.outcome {
            try await db.raw("SAVEPOINT sync_mutation").run()
            do {
                let written = try await write(mutation, context: context, on: db)
                try await db.raw("RELEASE SAVEPOINT sync_mutation").run()
                result = written
            } catch {
                try await db.raw("ROLLBACK TO SAVEPOINT sync_mutation").run()
                try await db.raw("RELEASE SAVEPOINT sync_mutation").run()
                guard let problem = (error as? Problem) ?? (Database.isUniqueViolation(error) ? CycleStore.periodExists(period) : nil) else { throw error }
                result = rejected(mutation, problem)
            }
        } else {
            do {
                result = try await write(mutation, context: context, on: db)
            } catch let problem as Problem {
                // Raised before anything is written (ownership, the plan limit, the preferences' own rules).
                result = rejected(mutation, problem)
            }
        }
        try await store(result, user: context.user, now: context.now, on: db)
        return result
    }

    private static func write(_ mutation: PendingMutation, context: ApplyContext, on db: any SQLDatabase) async throws -> Components.Schemas.SyncMutationResult {
        let (user, now) = (context.user, context.now)
        let write: PendingMutation.Write
        switch mutation.outcome {
        case .write(let checked): write = checked
        case .rejected(let problem): return rejected(mutation, problem)
        }
        let stamp = try await SyncFeed.stamp(mutation.collection, id: mutation.recordID, of: user, on: db)
        // A record live in the user's feed is theirs; any other id may be another user's row.
        if stamp.map({ $0.deleted }) ?? true, let table = mutation.collection.table, let id = UUID(uuidString: mutation.recordID),
            let owner = try await db.select().column("user_id").from(table).where("id", .equal, id).first()?.decode(column: "user_id", as: UUID.self),
            owner != user.rawValue
        {
            throw Problem(
                .conflict, code: "id_taken", detail: "This id is in use by a record you cannot change; create the record under a new id.",
                fieldErrors: [.init(field: "id", message: "is in use")]
            ).prefixingFields(with: "mutations[\(mutation.index)].")
        }
        if mutation.operation == .delete, let stamp, stamp.deleted {
            return applied(mutation, version: stamp.version)  // already gone: nothing to do
        }
        if case .healthSample = write, let stamp, !stamp.deleted {
            return applied(mutation, version: stamp.version)  // a stored sample never changes: sending it again is a no-op
        }
        let decision = mutation.collection.policy.decide(
            mutation.operation, baseVersion: mutation.baseVersion, clientUpdatedAt: mutation.updatedAt, server: stamp
        )
        guard decision.applies else {
            return try await conflict(mutation, resolution: .serverWins, version: stamp?.version ?? 0, context: context, on: db)
        }
        let change: SyncChange
        switch write {
        case .delete:
            let id = UUID(uuidString: mutation.recordID) ?? UUID()
            switch mutation.collection {
            case .plans: _ = try await PlanStore.delete(PlanID(rawValue: id), of: user, on: db)
            case .workoutLogs:
                if try await HistoryStore.delete(WorkoutLogID(rawValue: id), of: user, on: db) {
                    try await ChallengeScoring.removed(WorkoutLogID(rawValue: id), of: user, now: now, on: db)
                }
            case .cycleLogs: _ = try await CycleStore.delete(PeriodID(rawValue: id), of: user, on: db)
            case .healthSamples: _ = try await HealthSampleStore.delete(id, of: user, on: db)
            case .preferences: break
            }
            change = try await SyncFeed.record(mutation.collection, id: mutation.recordID, of: user, deleted: true, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0, on: db)
        case .plan(var plan):
            if stamp.map(\.deleted) ?? true, let planLimit = context.planLimit, try await PlanStore.count(of: user, on: db) >= planLimit.plans {
                throw planLimit.problem
            }
            change = try await SyncFeed.record(.plans, id: mutation.recordID, of: user, deleted: false, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0, on: db)
            plan.version = change.stamp.version
            plan.updatedAt = mutation.updatedAt
            try await PlanStore.upsert(plan, of: user, on: db)
        case .workoutLog(let log):
            try await HistoryStore.upsert(log, of: user, now: now, on: db)
            try await ChallengeScoring.logged(log, of: user, now: now, on: db)
            change = try await SyncFeed.record(.workoutLogs, id: mutation.recordID, of: user, deleted: false, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0, on: db)
        case .period(let period):
            try await CycleStore.upsert(period, of: user, now: mutation.updatedAt, on: db)
            change = try await SyncFeed.record(.cycleLogs, id: mutation.recordID, of: user, deleted: false, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0, on: db)
        case .healthSample(let sample):
            _ = try await HealthSampleStore.insert([sample], of: user, now: now, on: db)
            change = try await SyncFeed.record(.healthSamples, id: mutation.recordID, of: user, deleted: false, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0, on: db)
        case .preferences(let update):
            do {
                _ = try await ProfileStore.update(user, updatedAt: mutation.updatedAt, on: db) { profile in
                    try ProfileUpdate.apply(update, to: &profile, today: LocalCalendar.today(in: profile.timeZone).description)
                }
            } catch let problem as Problem {
                throw problem.prefixingFields(with: "mutations[\(mutation.index)].data.")
            }
            guard let stamp = try await SyncFeed.stamp(.preferences, id: SyncFeed.preferencesID, of: user, on: db) else { throw SyncFeedError.noSequence }
            change = SyncChange(collection: .preferences, recordID: SyncFeed.preferencesID, seq: 0, stamp: stamp)
        }
        if decision == .clientWins {
            return try await conflict(mutation, resolution: .clientWins, version: change.stamp.version, context: context, on: db)
        }
        return applied(mutation, version: change.stamp.version)
    }

    // MARK: Results

    private static func applied(_ mutation: PendingMutation, version: Int) -> Components.Schemas.SyncMutationResult {
        .init(mutationId: mutation.mutationID, status: .applied, version: version)
    }

    private static func rejected(_ mutation: PendingMutation, _ problem: Problem) -> Components.Schemas.SyncMutationResult {
        .init(mutationId: mutation.mutationID, status: .rejected, problem: problem.wire(instance: "/v1/sync/push"))
    }

    /// A conflict result with the record as the server now holds it.
    private static func conflict(
        _ mutation: PendingMutation, resolution: Components.Schemas.SyncMutationResult.ResolutionPayload, version: Int, context: ApplyContext,
        on db: any SQLDatabase
    ) async throws -> Components.Schemas.SyncMutationResult {
        let user = context.user
        let stamp = try await SyncFeed.stamp(mutation.collection, id: mutation.recordID, of: user, on: db)
        var record: Components.Schemas.SyncChange?
        // Results are stored in clear (to answer replays): a health sample's record would put its values there, so
        // its conflict names the version only and the device pulls the record from the feed.
        if let stamp, mutation.collection != .healthSamples {
            let change = SyncChange(collection: mutation.collection, recordID: mutation.recordID, seq: 0, stamp: stamp)
            record = try await SyncController.wire([change], of: user, health: context.health, on: db).first
        }
        return .init(mutationId: mutation.mutationID, status: .conflict, version: version, resolution: resolution, serverRecord: record)
    }

    /// The stored results of those of `mutationIDs` answered before, by id.
    private static func storedResults(of mutationIDs: [String], user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncMutationResult] {
        guard !mutationIDs.isEmpty else { return [:] }
        let rows = try await db.select().columns("mutation_id", "result").from("sync_mutations")
            .where("user_id", .equal, user.rawValue).where("mutation_id", .in, Array(Set(mutationIDs))).all()
        var results: [String: Components.Schemas.SyncMutationResult] = [:]
        for row in rows {
            results[try row.decode(column: "mutation_id", as: String.self)] = try resultCoding.decoder.decode(
                Components.Schemas.SyncMutationResult.self, from: Data(try row.decode(column: "result", as: String.self).utf8)
            )
        }
        return results
    }

    private static func store(_ result: Components.Schemas.SyncMutationResult, user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.insert(into: "sync_mutations").columns("user_id", "mutation_id", "result", "created_at")
            .values(
                SQLBind(user.rawValue), SQLBind(result.mutationId),
                SQLBind(String(decoding: try resultCoding.encoder.encode(result), as: UTF8.self)), SQLBind(now)
            )
            .run()
    }

    /// Stored results keep instants to the second, as the API writes them.
    private static let resultCoding: (encoder: JSONEncoder, decoder: JSONDecoder) = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (encoder, decoder)
    }()
}

extension SyncCollection {
    /// The table holding the collection's records (keyed by `id`, owned through `user_id`).
    var table: String? {
        switch self {
        case .plans: "training_plans"
        case .workoutLogs: "workout_logs"
        case .cycleLogs: "cycle_periods"
        case .healthSamples: "health_samples"
        case .preferences: nil
        }
    }
}

extension Problem {
    /// The problem with `prefix` put before every field path (and the detail rewritten to match).
    func prefixingFields(with prefix: String) -> Problem {
        guard !fieldErrors.isEmpty else { return self }
        var copy = self
        copy.fieldErrors = fieldErrors.map { .init(field: prefix + $0.field, message: $0.message) }
        copy.detail = copy.fieldErrors.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
        return copy
    }
}

extension Error {
    /// ``Problem/prefixingFields(with:)`` for a thrown problem; other errors unchanged.
    fileprivate func prefixingFields(with prefix: String) -> any Error {
        (self as? Problem)?.prefixingFields(with: prefix) ?? self
    }
}

/// RFC 3339 instants, with or without fractional seconds.
enum InternetTime {
    static func date(from text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }
}
