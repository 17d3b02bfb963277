import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// `POST /v1/analytics/events`: a signed-in user's app reports product events, with the user's `analytics` consent.
protocol AnalyticsOperations: FeatureOperations {
    var analyticsFeature: AnalyticsFeature { get }
    var accountsFeature: AccountsFeature { get }
}

extension AnalyticsOperations {
    func sendAnalyticsEvents(_ input: Operations.SendAnalyticsEvents.Input) async throws -> Operations.SendAnalyticsEvents.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let feature = analyticsFeature
        // Counted first, valid or not: a client looping on a bad batch is held back like one looping on good ones.
        let rule = feature.rateLimit
        if let retryAfter = try await feature.store.database.transaction({ db in try await RateLimiter.hit(caller.user.description, rule, now: now, on: db) }) {
            throw Problem.tooManyRequests(
                .rateLimited, retryAfter: retryAfter,
                "At most \(rule.limit) analytics batches a minute per account; retry in \(retryAfter) seconds (batch up to \(ProductEventRules.maximumBatch) events)."
            )
        }
        guard try await accountsFeature.consents.isGranted(.analytics, for: caller.user) else {
            throw Problem(.forbidden, code: .consentRequired, detail: "The user has not given the analytics consent (POST /v1/me/consents, kind analytics).")
        }
        let events = try AnalyticsWire.events(body, now: now)
        let accepted = try await feature.store.insert(events, of: caller.user, receivedAt: now)
        return .ok(.init(body: .json(.init(accepted: accepted, duplicates: events.count - accepted))))
    }
}

/// The contract's analytics batch ↔ Core's ``ProductEvent``.
enum AnalyticsWire {
    /// The batch's events, or every broken rule at once (``ProductEventRules``, and the wire's own: ids, value types).
    static func events(_ batch: Components.Schemas.AnalyticsEventBatch, now: Date) throws -> [ProductEvent] {
        guard batch.events.count <= ProductEventRules.maximumBatch else {
            throw Problem.batchTooLarge("events", maximum: ProductEventRules.maximumBatch, noun: "events", request: "A batch")
        }
        var errors: [FieldError] = []
        var events: [ProductEvent] = []
        for (index, wire) in batch.events.enumerated() {
            let path = "events[\(index)]"
            let id = UUID(uuidString: wire.id)
            if id == nil { errors.append(FieldError(field: "\(path).id", message: "must be a UUID")) }
            var properties: [String: ProductEventValue] = [:]
            for (key, value) in (try wire.properties?.fields() ?? [:]).sorted(by: { $0.key < $1.key }) {
                switch value {
                case .string(let text): properties[key] = .string(text)
                case .int(let number): properties[key] = .number(Double(number))
                case .double(let number): properties[key] = .number(number)
                case .bool(let flag): properties[key] = .bool(flag)
                case .null, .array, .object:
                    errors.append(FieldError(field: "\(path).properties.\(key)", message: "must be a string, a number or true or false"))
                }
            }
            events.append(ProductEvent(id: id ?? UUID(), name: wire.name, occurredAt: wire.occurredAt, properties: properties))
        }
        errors += ProductEventRules.violations(of: events, now: now)
        guard errors.isEmpty else { throw InvalidFields(errors) }
        return events
    }
}
