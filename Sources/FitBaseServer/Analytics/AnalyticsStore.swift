import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// `analytics_events`: product analytics, one row per event a signed-in user's app reported, kept for
/// `FITBASE_ANALYTICS_RETENTION_DAYS`. Only what ``ProductEventRules`` let through is ever written: no health or cycle
/// data. `day` is the UTC day the event happened on, for the daily counts.
struct AnalyticsStore: Sendable {
    let database: Database

    /// How many of an event happened on one day.
    struct DailyCount: Sendable, Equatable {
        let day: CalendarDay
        let name: String
        let count: Int
    }

    /// Stores `events` of `user` in one transaction; an event whose id the user already sent is skipped. Returns how
    /// many were new.
    func insert(_ events: [ProductEvent], of user: UserID, receivedAt: Date) async throws -> Int {
        let rows: [[any SQLExpression]] = try events.map { event in
            [
                SQLBind(user.rawValue), SQLBind(event.id), SQLBind(event.name), SQLBind(event.occurredAt),
                SQLBind(CalendarDay(event.occurredAt, in: .gmt).description), SQLBind(try Self.encode(event.properties)), SQLBind(receivedAt),
            ]
        }
        return try await database.transaction { db in
            let insert = db.insert(into: "analytics_events").columns("user_id", "id", "name", "occurred_at", "day", "properties", "received_at")
            for row in rows { insert.values(row) }
            return try await insert.ignoringConflicts(with: ["user_id", "id"]).returning("id").all().count
        }
    }

    /// Events per name per UTC day, from `from` to `to` inclusive, by day then name (the console's dashboard).
    func dailyCounts(from: CalendarDay, to: CalendarDay) async throws -> [DailyCount] {
        try await database.withConnection { db in
            try await db.select().column("day").column("name").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "events")
                .from("analytics_events")
                .where("day", .greaterThanOrEqual, from.description).where("day", .lessThanOrEqual, to.description)
                .groupBy("day").groupBy("name").orderBy("day").orderBy("name")
                .all()
                .compactMap { row in
                    guard let day = CalendarDay(try row.decode(column: "day", as: String.self)) else { return nil }
                    return DailyCount(day: day, name: try row.decode(column: "name", as: String.self), count: try row.decode(column: "events", as: Int.self))
                }
        }
    }

    /// Deletes the events that happened before `cutoff`; returns how many.
    @discardableResult
    func purge(before cutoff: Date) async throws -> Int {
        try await database.transaction { db in
            try await db.delete(from: "analytics_events").where("occurred_at", .lessThan, SQLBind(cutoff)).returning("id").all().count
        }
    }

    /// Properties as stored: a JSON object, keys sorted.
    static func encode(_ properties: [String: ProductEventValue]) throws -> String {
        var object: [String: JSONValue] = [:]
        for (key, value) in properties {
            switch value {
            case .string(let text): object[key] = .string(text)
            case .number(let number): object[key] = number.rounded() == number && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
            case .bool(let flag): object[key] = .bool(flag)
            }
        }
        return String(decoding: try DirectRoute.encoder.encode(object), as: UTF8.self)
    }
}

/// The user's analytics events: exported (what the app reported, when) and deleted with the account.
struct AnalyticsEventsOwner: InMemoryAccountDataOwner {
    let section = "analyticsEvents"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        try await exportRows(of: user, ["name", "occurred_at", "properties"], from: "analytics_events", orderBy: "occurred_at", on: db) { row in
            let properties = try JSONDecoder().decode([String: JSONValue].self, from: Data(try row.decode(column: "properties", as: String.self).utf8))
            var exported: [String: (any Sendable)?] = [:]
            for (key, value) in properties {
                switch value {
                case .string(let text): exported[key] = text
                case .int(let number): exported[key] = number
                case .double(let number): exported[key] = number
                case .bool(let flag): exported[key] = flag
                case .null, .array, .object: continue
                }
            }
            return [
                "name": try row.decode(column: "name", as: String.self),
                "occurredAt": try row.decode(column: "occurred_at", as: Date.self).formatted(.iso8601),
                "properties": exported,
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "analytics_events").where("user_id", .equal, user.rawValue).run()
    }
}
