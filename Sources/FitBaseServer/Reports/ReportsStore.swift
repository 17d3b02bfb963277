import FitBaseCore
import Foundation
import SQLKit

/// `app_reports`: what apps reported about themselves (only what ``AppReportRules`` let through), kept for
/// `FITBASE_REPORTS_RETENTION_DAYS`, summarized for the console.
struct ReportsStore: Sendable {
    let database: Database

    /// Errors of one code in one app version.
    struct ErrorCount: Sendable, Equatable {
        let code: String
        let appVersion: String
        let count: Int
    }

    /// Crashes whose innermost frame is `topFrame`.
    struct CrashGroup: Sendable, Equatable {
        let topFrame: String
        let exceptionType: String?
        let count: Int
        let latestVersion: String
    }

    /// One operation's durations on one UTC day, as percentiles (milliseconds).
    struct TracePercentiles: Sendable, Equatable {
        let operation: String
        let day: CalendarDay
        let count: Int
        let p50: Int
        let p95: Int
        let p99: Int
    }

    /// Durations one summary reads at most per operation and day (a sample of the newest beyond that).
    static let maximumTraceSamples = 20_000

    /// Stores `reports` in one transaction; a report whose id was already sent is skipped. Returns how many were new.
    func insert(_ reports: [AppReport], receivedAt: Date) async throws -> Int {
        let rows: [[any SQLExpression]] = try reports.map { report in
            let frames = try report.frames.isEmpty
                ? nil
                : String(decoding: JSONSerialization.data(withJSONObject: report.frames.map { ["module": $0.module, "symbol": $0.symbol, "offset": $0.offset] as [String: Any] }, options: [.sortedKeys]), as: UTF8.self)
            return [
                SQLBind(report.id), SQLBind(report.kind.rawValue), SQLBind(report.occurredAt), SQLBind(CalendarDay(report.occurredAt, in: .gmt).description),
                SQLBind(receivedAt), SQLBind(report.appVersion), SQLBind(report.platform.rawValue), SQLBind(report.osVersion), SQLBind(report.deviceModel),
                SQLBind(report.code), SQLBind(report.location), SQLBind(report.exceptionType), SQLBind(report.frames.first?.description), SQLBind(frames),
                SQLBind(report.operation), SQLBind(report.durationMilliseconds),
            ]
        }
        return try await database.transaction { db in
            let insert = db.insert(into: "app_reports").columns(
                "id", "kind", "occurred_at", "day", "received_at", "app_version", "platform", "os_version", "device_model", "code", "location",
                "exception_type", "top_frame", "frames", "operation", "duration_ms")
            for row in rows { insert.values(row) }
            return try await insert.ignoringConflicts(with: ["id"]).returning("id").all().count
        }
    }

    /// Errors per code and app version from `since` on, most first.
    func errorCounts(since: CalendarDay) async throws -> [ErrorCount] {
        try await database.withConnection { db in
            try await db.select().column("code").column("app_version").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n")
                .from("app_reports").where("kind", .equal, AppReport.Kind.error.rawValue).where("day", .greaterThanOrEqual, since.description)
                .groupBy("code").groupBy("app_version").orderBy("n", .descending).orderBy("code").orderBy("app_version").limit(200)
                .all().map { row in
                    ErrorCount(
                        code: try row.decode(column: "code", as: String?.self) ?? "", appVersion: try row.decode(column: "app_version", as: String.self),
                        count: try row.decode(column: "n", as: Int.self))
                }
        }
    }

    /// Crashes grouped by their innermost frame from `since` on, most first.
    func crashGroups(since: CalendarDay) async throws -> [CrashGroup] {
        try await database.withConnection { db in
            try await db.select().column("top_frame").column(SQLFunction("MAX", args: SQLIdentifier("exception_type")), as: "exception")
                .column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").column(SQLFunction("MAX", args: SQLIdentifier("app_version")), as: "latest")
                .from("app_reports").where("kind", .equal, AppReport.Kind.crash.rawValue).where("day", .greaterThanOrEqual, since.description)
                .groupBy("top_frame").orderBy("n", .descending).orderBy("top_frame").limit(100)
                .all().map { row in
                    CrashGroup(
                        topFrame: try row.decode(column: "top_frame", as: String?.self) ?? "", exceptionType: try row.decode(column: "exception", as: String?.self),
                        count: try row.decode(column: "n", as: Int.self), latestVersion: try row.decode(column: "latest", as: String?.self) ?? "")
                }
        }
    }

    /// p50, p95 and p99 of each operation's durations per UTC day from `since` on, by operation then day.
    func tracePercentiles(since: CalendarDay) async throws -> [TracePercentiles] {
        let rows = try await database.withConnection { db in
            try await db.select().columns("operation", "day", "duration_ms").from("app_reports")
                .where("kind", .equal, AppReport.Kind.trace.rawValue).where("day", .greaterThanOrEqual, since.description)
                .orderBy("occurred_at", .descending).limit(Self.maximumTraceSamples * 20)
                .all().map { row in
                    (try row.decode(column: "operation", as: String?.self) ?? "", try row.decode(column: "day", as: String.self), try row.decode(column: "duration_ms", as: Int?.self) ?? 0)
                }
        }
        var durations: [String: [String: [Int]]] = [:]
        for (operation, day, duration) in rows where (durations[operation]?[day]?.count ?? 0) < Self.maximumTraceSamples {
            durations[operation, default: [:]][day, default: []].append(duration)
        }
        var summaries: [TracePercentiles] = []
        for (operation, days) in durations {
            for (text, values) in days {
                guard let day = CalendarDay(text) else { continue }
                let sorted = values.sorted()
                summaries.append(TracePercentiles(
                    operation: operation, day: day, count: sorted.count, p50: Self.percentile(50, of: sorted), p95: Self.percentile(95, of: sorted),
                    p99: Self.percentile(99, of: sorted)))
            }
        }
        return summaries.sorted { ($0.operation, $0.day.description) < ($1.operation, $1.day.description) }
    }

    /// The nearest-rank percentile of sorted `values`.
    static func percentile(_ percent: Int, of sorted: [Int]) -> Int {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(percent) / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Deletes the reports that happened before `cutoff`; returns how many.
    @discardableResult
    func purge(before cutoff: Date) async throws -> Int {
        try await database.transaction { db in
            try await db.delete(from: "app_reports").where("occurred_at", .lessThan, SQLBind(cutoff)).returning("id").all().count
        }
    }
}
