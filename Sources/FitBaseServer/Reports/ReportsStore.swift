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

    /// What a report is summarized by on the console, and so what an app could fill with made-up names: each takes at
    /// most `FITBASE_REPORTS_DISTINCT_PER_DAY` new names a day (error codes and exception types are closed vocabularies).
    enum NameDimension: String, Sendable, CaseIterable {
        case appVersion = "app-version", frame, operation
    }

    /// What a name past its dimension's budget for the day is stored as. No identifier, symbol or version can be it.
    static let otherName = "(other)"

    /// Stores `reports` in one transaction; a report whose id was already sent is skipped. Returns how many were new.
    ///
    /// Names of each ``NameDimension`` are admitted first (``admitNames(_:day:cap:on:)``): a name past the budget of the
    /// day of receipt is stored as ``otherName`` (a crash's frames then not at all), so the report is still counted.
    func insert(_ reports: [AppReport], receivedAt: Date, distinctNamesPerDay: Int) async throws -> Int {
        var wanted: [NameDimension: [String]] = [:]
        for report in reports {
            wanted[.appVersion, default: []].append(report.appVersion)
            if let frame = report.frames.first?.description { wanted[.frame, default: []].append(frame) }
            if let operation = report.operation { wanted[.operation, default: []].append(operation) }
        }
        let day = CalendarDay(receivedAt, in: .gmt)
        return try await database.transaction { [wanted] db in
            let admitted = try await Self.admitNames(wanted, day: day, cap: distinctNamesPerDay, on: db)
            func kept(_ name: String?, _ dimension: NameDimension) -> String? {
                name.map { admitted[dimension]?.contains($0) == true ? $0 : Self.otherName }
            }
            let rows: [[any SQLExpression]] = try reports.map { report in
                let topFrame = kept(report.frames.first?.description, .frame)
                let frames = try report.frames.isEmpty || topFrame == Self.otherName
                    ? nil
                    : String(decoding: JSONSerialization.data(
                        withJSONObject: report.frames.map { ["module": $0.module, "symbol": $0.symbol, "offset": $0.offset] as [String: Any] },
                        options: [.sortedKeys]), as: UTF8.self)
                return [
                    SQLBind(report.id), SQLBind(report.kind.rawValue), SQLBind(report.occurredAt),
                    SQLBind(CalendarDay(report.occurredAt, in: .gmt).description), SQLBind(receivedAt),
                    SQLBind(kept(report.appVersion, .appVersion)),
                    SQLBind(report.platform.rawValue), SQLBind(report.osVersion), SQLBind(report.deviceModel), SQLBind(report.code),
                    SQLBind(report.location), SQLBind(report.exceptionType), SQLBind(topFrame), SQLBind(frames),
                    SQLBind(kept(report.operation, .operation)), SQLBind(report.durationMilliseconds),
                ]
            }
            let insert = db.insert(into: "app_reports").columns(
                "id", "kind", "occurred_at", "day", "received_at", "app_version", "platform", "os_version", "device_model", "code", "location",
                "exception_type", "top_frame", "frames", "operation", "duration_ms")
            for row in rows { insert.values(row) }
            return try await insert.ignoringConflicts(with: ["id"]).returning("id").all().count
        }
    }

    /// The names of `wanted` each dimension may store on `day`: those it took already, and new ones while its budget of
    /// `cap` lasts. Decided in the database, so every instance keeps to one budget: a dimension's row of
    /// `app_report_name_budgets` is locked (an upsert; SQLite has one writer anyway) before the names it lacks are
    /// read again and admitted, dimensions always in the same order. A batch whose names were all seen that day takes no
    /// lock: one read.
    static func admitNames(_ wanted: [NameDimension: [String]], day: CalendarDay, cap: Int, on db: any SQLDatabase) async throws
        -> [NameDimension: Set<String>]
    {
        let names = Set(wanted.values.joined())
        guard !names.isEmpty else { return [:] }
        var known = try await knownNames(names, day: day, on: db)
        for dimension in NameDimension.allCases {
            var seen: Set<String> = []
            let new = (wanted[dimension] ?? []).filter { known[dimension]?.contains($0) != true && seen.insert($0).inserted }
            guard !new.isEmpty else { continue }
            let used = try await db.raw("""
                INSERT INTO app_report_name_budgets (day, dimension, used)
                VALUES (\(bind: day.description), \(bind: dimension.rawValue), 0)
                ON CONFLICT (day, dimension) DO UPDATE SET used = app_report_name_budgets.used
                RETURNING used
                """).first()?.decode(column: "used", as: Int.self) ?? 0
            // Another transaction may have taken some of them while this one waited for the lock.
            let taken = try await knownNames(Set(new), day: day, on: db)[dimension] ?? []
            known[dimension, default: []].formUnion(taken)
            let admitted = Array(new.filter { !taken.contains($0) }.prefix(max(0, cap - used)))
            guard !admitted.isEmpty else { continue }
            let insert = db.insert(into: "app_report_names").columns("day", "dimension", "name")
            for name in admitted { insert.values(SQLBind(day.description), SQLBind(dimension.rawValue), SQLBind(name)) }
            try await insert.ignoringConflicts(with: ["day", "dimension", "name"]).run()
            try await db.update("app_report_name_budgets").set(SQLIdentifier("used"), to: SQLRaw("used + \(admitted.count)"))
                .where("day", .equal, day.description).where("dimension", .equal, dimension.rawValue).run()
            known[dimension, default: []].formUnion(admitted)
        }
        return known
    }

    /// Which of `names` each dimension took on `day`.
    private static func knownNames(_ names: Set<String>, day: CalendarDay, on db: any SQLDatabase) async throws
        -> [NameDimension: Set<String>]
    {
        var known: [NameDimension: Set<String>] = [:]
        let rows = try await db.select().columns("dimension", "name").from("app_report_names")
            .where("day", .equal, day.description).where("name", .in, names.sorted()).all()
        for row in rows {
            guard let dimension = NameDimension(rawValue: try row.decode(column: "dimension", as: String.self)) else { continue }
            known[dimension, default: []].insert(try row.decode(column: "name", as: String.self))
        }
        return known
    }

    /// Errors per code and app version from `since` on, most first: `limit` of them after the first `offset`.
    func errorCounts(since: CalendarDay, limit: Int = 200, offset: Int = 0) async throws -> [ErrorCount] {
        try await database.withConnection { db in
            try await db.select().column("code").column("app_version").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n")
                .from("app_reports").where("kind", .equal, AppReport.Kind.error.rawValue).where("day", .greaterThanOrEqual, since.description)
                .groupBy("code").groupBy("app_version").orderBy("n", .descending).orderBy("code").orderBy("app_version")
                .limit(limit).offset(offset)
                .all().map { row in
                    ErrorCount(
                        code: try row.decode(column: "code", as: String?.self) ?? "", appVersion: try row.decode(column: "app_version", as: String.self),
                        count: try row.decode(column: "n", as: Int.self))
                }
        }
    }

    /// Crashes grouped by their innermost frame from `since` on, most first: `limit` of them after the first `offset`.
    func crashGroups(since: CalendarDay, limit: Int = 100, offset: Int = 0) async throws -> [CrashGroup] {
        try await database.withConnection { db in
            try await db.select().column("top_frame").column(SQLFunction("MAX", args: SQLIdentifier("exception_type")), as: "exception")
                .column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").column(SQLFunction("MAX", args: SQLIdentifier("app_version")), as: "latest")
                .from("app_reports").where("kind", .equal, AppReport.Kind.crash.rawValue).where("day", .greaterThanOrEqual, since.description)
                .groupBy("top_frame").orderBy("n", .descending).orderBy("top_frame").limit(limit).offset(offset)
                .all().map { row in
                    CrashGroup(
                        topFrame: try row.decode(column: "top_frame", as: String?.self) ?? "", exceptionType: try row.decode(column: "exception", as: String?.self),
                        count: try row.decode(column: "n", as: Int.self), latestVersion: try row.decode(column: "latest", as: String?.self) ?? "")
                }
        }
    }

    /// The operations traced from `since` on, by name: `limit` of them after the first `offset`.
    func tracedOperations(since: CalendarDay, limit: Int, offset: Int = 0) async throws -> [String] {
        try await database.withConnection { db in
            try await db.select().distinct().column("operation").from("app_reports")
                .where("kind", .equal, AppReport.Kind.trace.rawValue).where("day", .greaterThanOrEqual, since.description)
                .orderBy("operation").limit(limit).offset(offset)
                .all().map { try $0.decode(column: "operation", as: String?.self) ?? "" }
        }
    }

    /// p50, p95 and p99 of each operation's durations per UTC day from `since` on, by operation then day; only those of
    /// `operations` when given (a page of ``tracedOperations(since:limit:offset:)``).
    func tracePercentiles(since: CalendarDay, operations: [String]? = nil) async throws -> [TracePercentiles] {
        if operations?.isEmpty == true { return [] }
        let rows = try await database.withConnection { db in
            let query = db.select().columns("operation", "day", "duration_ms").from("app_reports")
                .where("kind", .equal, AppReport.Kind.trace.rawValue).where("day", .greaterThanOrEqual, since.description)
            if let operations { query.where("operation", .in, operations) }
            return try await query.orderBy("occurred_at", .descending).limit(Self.maximumTraceSamples * 20)
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

    /// Deletes the reports that happened before `cutoff`, and the names taken on days before it; returns how many
    /// reports.
    @discardableResult
    func purge(before cutoff: Date) async throws -> Int {
        let day = CalendarDay(cutoff, in: .gmt).description
        return try await database.transaction { db in
            try await db.delete(from: "app_report_names").where("day", .lessThan, day).run()
            try await db.delete(from: "app_report_name_budgets").where("day", .lessThan, day).run()
            return try await db.delete(from: "app_reports").where("occurred_at", .lessThan, SQLBind(cutoff))
                .returning("id").all().count
        }
    }
}
