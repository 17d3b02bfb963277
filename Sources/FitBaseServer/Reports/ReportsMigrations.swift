import SQLKit

/// `app_reports`: errors, crashes and traces apps sent (see ``ReportsStore``). Keyed by the client's report id (a batch
/// sent again is stored once); no user id: a report says what went wrong, not to whom. Indexed for the console's
/// summaries by day and for the retention purge.
struct CreateAppReports: Migration {
    let name = "2026-11-26.reports.create-app-reports"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "app_reports")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("kind", type: .text, .notNull)
            .column("occurred_at", type: engine.instant, .notNull)
            .column("day", type: .text, .notNull)  // YYYY-MM-DD, UTC
            .column("received_at", type: engine.instant, .notNull)
            .column("app_version", type: .text, .notNull)
            .column("platform", type: .text, .notNull)
            .column("os_version", type: .text)
            .column("device_model", type: .text, .notNull)
            .column("code", type: .text)
            .column("location", type: .text)
            .column("exception_type", type: .text)
            .column("top_frame", type: .text)  // "module symbol+offset" of the innermost frame
            .column("frames", type: .text)  // JSON array of {module, symbol, offset}
            .column("operation", type: .text)
            .column("duration_ms", type: .int)
            .run()
        try await database.create(index: "app_reports_kind_day").on("app_reports").column("kind").column("day").run()
        try await database.create(index: "app_reports_occurred").on("app_reports").column("occurred_at").run()
    }
}

/// `app_report_names`: each name a dimension (operations, crash top frames, app versions) took on a day of receipt, and
/// `app_report_name_budgets`: how many it took, the row every instance locks to admit a new one (see
/// ``ReportsStore/admitNames(_:day:cap:on:)``). Names past the day's budget are stored as `(other)`.
struct CreateAppReportNames: Migration {
    let name = "2026-11-28.reports.create-app-report-names"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "app_report_names")
            .column("day", type: .text, .notNull)  // YYYY-MM-DD, UTC, of receipt
            .column("dimension", type: .text, .notNull)
            .column("name", type: .text, .notNull)
            .primaryKey("day", "dimension", "name")
            .run()
        try await database.create(table: "app_report_name_budgets")
            .column("day", type: .text, .notNull)
            .column("dimension", type: .text, .notNull)
            .column("used", type: .int, .notNull)
            .primaryKey("day", "dimension")
            .run()
    }
}
