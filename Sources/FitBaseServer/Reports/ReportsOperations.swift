import FitBaseAPI
import FitBaseCore
import Foundation

/// `POST /v1/reports`: an app reports its errors, crashes and operation timings, signed in or not (unless
/// `FITBASE_REPORTS_ANONYMOUS=off`).
protocol ReportsOperations: FeatureOperations {
    var reportsFeature: ReportsFeature { get }
}

extension ReportsOperations {
    func sendAppReports(_ input: Operations.SendAppReports.Input) async throws -> Operations.SendAppReports.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let feature = reportsFeature
        let scope = RequestScope.current
        if scope.caller == nil, !feature.configuration.acceptsAnonymous {
            throw scope.authenticationFailure
                ?? .unauthenticated(.authenticationRequired, "This server takes reports from signed-in apps only.")
        }
        // Counted first, valid or not, per account and per address (an app signed out has only its address), and every
        // anonymous batch against one budget of the whole deployment, so that many addresses do not multiply it.
        let refusal = try await feature.store.database.transaction { db -> (Int, String)? in
            if let user = scope.caller?.user, let retry = try await RateLimiter.hit(user.description, feature.userLimit, now: now, on: db) {
                return (retry, "\(feature.userLimit.limit) report batches a minute per account")
            }
            if let address = scope.clientAddress, let retry = try await RateLimiter.hit(address, feature.addressLimit, now: now, on: db) {
                return (retry, "\(feature.addressLimit.limit) report batches a minute per client address")
            }
            if scope.caller == nil, let retry = try await RateLimiter.hit("anonymous", feature.anonymousLimit, now: now, on: db) {
                return (retry, "\(feature.anonymousLimit.limit) report batches a minute from apps that are not signed in")
            }
            return nil
        }
        if case let (retryAfter, limit)? = refusal {
            throw Problem.tooManyRequests(
                .rateLimited, retryAfter: retryAfter, "At most \(limit); retry in \(retryAfter) seconds (batch up to \(AppReportRules.maximumBatch) reports).")
        }
        let reports = try ReportsWire.reports(body, now: now)
        let accepted = try await feature.store.insert(
            reports, receivedAt: now, distinctNamesPerDay: feature.configuration.distinctNamesPerDay)
        return .ok(.init(body: .json(.init(accepted: accepted, duplicates: reports.count - accepted))))
    }
}

/// The contract's report batch ↔ Core's ``AppReport``.
enum ReportsWire {
    /// The batch's reports, or every broken rule at once (``AppReportRules``, and the wire's: ids, kinds, platforms).
    static func reports(_ batch: Components.Schemas.AppReportBatch, now: Date) throws -> [AppReport] {
        guard batch.reports.count <= AppReportRules.maximumBatch else {
            throw Problem.batchTooLarge("reports", maximum: AppReportRules.maximumBatch, noun: "reports", request: "A batch")
        }
        var errors: [FieldError] = []
        var reports: [AppReport] = []
        for (index, wire) in batch.reports.enumerated() {
            let path = "reports[\(index)]"
            let id = UUID(uuidString: wire.id)
            if id == nil { errors.append(FieldError(field: "\(path).id", message: "must be a UUID")) }
            let kind = AppReport.Kind(rawValue: wire.kind)
            if kind == nil { errors.append(FieldError(field: "\(path).kind", message: "must be error, crash or trace")) }
            let platform = ConfigPlatform(rawValue: wire.platform)
            if platform == nil {
                errors.append(FieldError(field: "\(path).platform", message: "must be one of \(ConfigPlatform.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            reports.append(AppReport(
                id: id ?? UUID(), kind: kind ?? .error, occurredAt: wire.occurredAt, appVersion: wire.appVersion, platform: platform ?? .ios,
                osVersion: wire.osVersion, deviceModel: wire.deviceModel, code: wire.code, location: wire.location, exceptionType: wire.exceptionType,
                frames: (wire.frames ?? []).map { AppReport.Frame(module: $0.module, symbol: $0.symbol, offset: $0.offset) },
                operation: wire.operation, durationMilliseconds: wire.durationMilliseconds
            ))
        }
        // The wire's own refusals first; Core's rules then name the rest (a report of an unknown kind is checked as an error).
        let named = Set(errors.map(\.field))
        errors += AppReportRules.violations(of: reports, now: now).filter { !named.contains($0.field) }
        guard errors.isEmpty else { throw InvalidFields(errors) }
        return reports
    }
}
