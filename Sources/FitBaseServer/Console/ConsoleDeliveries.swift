import FitBaseCore
import Foundation
import Hummingbird
import SQLKit

/// The Deliveries page: the outbox's e-mails, pushes and Apple token revocations with their status and last error (a
/// failed one can be sent again), and the App Store and Stripe notifications received.
extension ConsoleFeature {
    func deliveries(_ request: Request, _ admin: ConsoleAdmin, notice: String? = nil) async throws -> Response {
        let status = request.uri.queryParameters.get("status").flatMap(OutboxStatus.init(rawValue:))
        let (jobs, receipts, appleReceipts) = try await database.withConnection { db in
            var query = db.select().columns("id", "kind", "status", "attempts", "last_error", "created_at", "next_attempt_at", "completed_at").from("outbox")
            if let status { query = query.where("status", .equal, status.rawValue) }
            let jobs = try await query.orderBy("created_at", .descending).limit(100).all().map { row -> [String: String] in
                let state = try row.decode(column: "status", as: String.self)
                return [
                    "id": try row.decode(column: "id", as: UUID.self).uuidString.lowercased(), "kind": try row.decode(column: "kind", as: String.self),
                    "status": state, "attempts": String(try row.decode(column: "attempts", as: Int.self)),
                    "error": try row.decode(column: "last_error", as: String?.self) ?? "", "created": consoleTime(try row.decode(column: "created_at", as: Date.self)),
                    "next": state == OutboxStatus.pending.rawValue ? consoleTime(try row.decode(column: "next_attempt_at", as: Date.self)) : "—",
                    "completed": consoleTime(try row.decode(column: "completed_at", as: Date?.self)),
                ]
            }
            let receipts = try await db.select().columns("source", "event_id", "type", "received_at").from("billing_events")
                .orderBy("received_at", .descending).limit(100).all().map { row -> [String: String] in
                    [
                        "source": try row.decode(column: "source", as: String.self), "event": try row.decode(column: "event_id", as: String.self),
                        "type": try row.decode(column: "type", as: String.self), "received": consoleTime(try row.decode(column: "received_at", as: Date.self)),
                    ]
                }
            let appleReceipts = try await db.select().columns("jti", "received_at").from("apple_notification_receipts")
                .orderBy("received_at", .descending).limit(50).all().map { row -> [String: String] in
                    ["event": try row.decode(column: "jti", as: String.self), "received": consoleTime(try row.decode(column: "received_at", as: Date.self))]
                }
            return (jobs, receipts, appleReceipts)
        }
        let failures = try await WebhookFailureLog.recent(limit: 100, in: database).map { failure -> [String: Any] in
            ["source": failure.source, "received": consoleTime(failure.receivedAt), "status": failure.status, "error": failure.detail]
        }
        var values: [String: Any] = [
            "jobs": jobs.map { job -> [String: Any] in
                var row: [String: Any] = job
                row["failed"] = job["status"] == OutboxStatus.failed.rawValue
                return row
            },
            "receipts": receipts, "appleReceipts": appleReceipts, "failures": failures,
            "statuses": [("", "Every status"), ("pending", "Pending"), ("sent", "Sent"), ("failed", "Failed")].map {
                ["value": $0.0, "label": $0.1, "selected": $0.0 == (status?.rawValue ?? "")]
            },
        ]
        if let retried = request.uri.queryParameters.get("retried") { values["notice"] = "Delivery \(retried) is queued again." }
        if let notice { values["notice"] = notice }
        return try renderer.page("deliveries", title: "Deliveries", section: "/console/deliveries", admin: admin, values)
    }

    /// Sends a failed job again: pending, due now, its attempts counted from zero; the outbox worker is woken.
    func retryDelivery(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        guard let id = UUID(uuidString: Self.parameter("job", context)) else { throw Problem.notFound("No such delivery.") }
        let now = clock.now
        let retried = try await database.transaction { db in
            let rows = try await db.update("outbox").set("status", to: OutboxStatus.pending.rawValue).set("attempts", to: 0)
                .set("next_attempt_at", to: now).set("claimed_until", to: SQLLiteral.null).set("completed_at", to: SQLLiteral.null)
                .where("id", .equal, id).where("status", .equal, OutboxStatus.failed.rawValue).returning("kind").all()
            guard let kind = try rows.first?.decode(column: "kind", as: String.self) else { return false }
            try await OperatorAuditTrail.record(.deliveryRetried, by: admin, target: "outbox", id.uuidString.lowercased(), detail: kind, now: now, on: db)
            return true
        }
        guard retried else { throw Problem.notFound("No failed delivery \(id.uuidString.lowercased()); it may have been sent or retried already.") }
        outbox.signal.wake()
        return ConsoleRenderer.redirect("/console/deliveries?retried=\(id.uuidString.lowercased())")
    }
}
