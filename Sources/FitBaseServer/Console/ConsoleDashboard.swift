import FitBaseCore
import Foundation
import Hummingbird
import SQLKit

/// The Dashboard: accounts, sign-ups, active accounts and workouts logged per day over the last two weeks (SVG drawn
/// here), subscriptions by tier and status, webhook failures, the outbox's depth — and product analytics once a
/// ``ConsoleAnalyticsSource`` is wired in.
///
/// "Active" counts the accounts that signed in or changed any of their synced data (plans, logs, preferences…) that
/// day, as far as the sync feed still shows it: the feed keeps each record's latest change, so older days undercount
/// accounts that changed the same record again since.
extension ConsoleFeature {
    static let dashboardDays = 14

    func dashboard(_ admin: ConsoleAdmin) async throws -> Response {
        let now = clock.now
        let days = Self.days(endingAt: now, count: Self.dashboardDays)
        let since = days.first?.start ?? now
        let figures = try await database.withConnection { db in
            let accounts = try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("users")
                .where("deleting_at", .is, SQLLiteral.null).first()?.decode(column: "n", as: Int.self) ?? 0
            let signUps = try await db.select().column("created_at").from("users").where("created_at", .greaterThanOrEqual, since).all()
                .map { try $0.decode(column: "created_at", as: Date.self) }
            let logs = try await db.select().column("created_at").from("workout_logs").where("created_at", .greaterThanOrEqual, since).all()
                .map { try $0.decode(column: "created_at", as: Date.self) }
            var active: [(UUID, Date)] = try await db.select().columns("user_id", "changed_at").from("sync_changes")
                .where("changed_at", .greaterThanOrEqual, since).all()
                .map { (try $0.decode(column: "user_id", as: UUID.self), try $0.decode(column: "changed_at", as: Date.self)) }
            active += try await db.select().columns("id", "last_sign_in_at").from("users").where("last_sign_in_at", .greaterThanOrEqual, since).all()
                .map { (try $0.decode(column: "id", as: UUID.self), try $0.decode(column: "last_sign_in_at", as: Date.self)) }
            let outbox = try await db.select().columns("kind", "status").column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("outbox")
                .where("status", .notEqual, OutboxStatus.sent.rawValue).groupBy("kind").groupBy("status").all()
                .map { (try $0.decode(column: "kind", as: String.self), try $0.decode(column: "status", as: String.self), try $0.decode(column: "n", as: Int.self)) }
            return (accounts, signUps, logs, active, outbox, try await SubscriptionStore.claimed(on: db))
        }
        let (accounts, signUps, logs, active, outbox, subscriptions) = figures
        func perDay(_ instants: [Date]) -> [(label: String, value: Int)] {
            days.map { day in (day.label, instants.filter { $0 >= day.start && $0 < day.end }.count) }
        }
        let activePerDay = days.map { day in (label: day.label, value: Set(active.filter { $0.1 >= day.start && $0.1 < day.end }.map(\.0)).count) }
        let resolver = EntitlementResolver()
        var byTierStatus: [String: Int] = [:]
        for record in subscriptions where !record.isPlaceholder {
            byTierStatus["\(record.state.tier.rawValue)|\(resolver.status(of: record.state, at: now).rawValue)", default: 0] += 1
        }
        let failures = try await WebhookFailureLog.count(since: since, in: database)
        var values: [String: Any] = [
            "accounts": accounts, "signUps": signUps.count, "logged": logs.count, "days": Self.dashboardDays,
            "signUpChart": BarChart(title: "Sign-ups per day", bars: perDay(signUps)).svg,
            "activeChart": BarChart(title: "Active accounts per day", bars: activePerDay).svg,
            "workoutChart": BarChart(title: "Workouts logged per day", bars: perDay(logs)).svg,
            "subscriptions": byTierStatus.sorted { $0.key < $1.key }.map { entry -> [String: Any] in
                let parts = entry.key.split(separator: "|")
                return ["tier": String(parts[0]), "status": String(parts[1]), "count": entry.value]
            },
            "webhookFailures": failures.count,
            "webhookFailureChart": BarChart(title: "Webhook failures per day", bars: perDay(failures)).svg,
            "outbox": outbox.map { ["kind": $0.0, "status": $0.1, "count": $0.2] },
            "outboxPending": outbox.filter { $0.1 == OutboxStatus.pending.rawValue }.reduce(0) { $0 + $1.2 },
            "outboxFailed": outbox.filter { $0.1 == OutboxStatus.failed.rawValue }.reduce(0) { $0 + $1.2 },
        ]
        values["analytics"] = try await analyticsPanel(since: since, days: days)
        return try renderer.page("dashboard", title: "Dashboard", section: "/console", admin: admin, values)
    }

    /// The product-analytics panel: one row per event with its count per day, or a note that no source is wired.
    private func analyticsPanel(since: Date, days: [Day]) async throws -> [String: Any] {
        guard let analytics else { return ["wired": false] }
        let counts = try await analytics.dailyEventCounts(since: since)
        let events = Set(counts.map(\.event)).sorted()
        return [
            "wired": true, "days": days.map { ["label": $0.label] },
            "events": events.map { event -> [String: Any] in
                let mine = counts.filter { $0.event == event }
                return ["event": event, "counts": days.map { day in ["count": mine.filter { $0.day == day.key }.reduce(0) { $0 + $1.count }] }]
            },
        ]
    }

    /// A UTC day of the dashboard.
    struct Day: Sendable {
        let start: Date
        let end: Date
        /// `MM-DD`, for the charts.
        let label: String
        /// `YYYY-MM-DD`.
        let key: String
    }

    static func days(endingAt now: Date, count: Int) -> [Day] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let today = calendar.startOfDay(for: now)
        return (0..<count).reversed().compactMap { back -> Day? in
            guard let start = calendar.date(byAdding: .day, value: -back, to: today), let end = calendar.date(byAdding: .day, value: 1, to: start) else { return nil }
            let parts = calendar.dateComponents([.year, .month, .day], from: start)
            let key = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            return Day(start: start, end: end, label: String(key.dropFirst(5)), key: key)
        }
    }
}
