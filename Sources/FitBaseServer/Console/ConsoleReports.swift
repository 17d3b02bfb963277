import FitBaseCore
import Foundation
import Hummingbird

/// The Reports page: the apps' errors by code and version, crashes grouped by their innermost frame, and each
/// operation's daily p50/p95/p99 durations on a chart with its budget (seed 004: leaderboard fetches under 2 s).
extension ConsoleFeature {
    /// Days the page covers, today included.
    static let reportDays = 14
    /// Operations with a duration budget, in milliseconds.
    static let traceBudgets: [String: Int] = ["leaderboard.fetch": 2_000]

    func reportsPage(_ admin: ConsoleAdmin) async throws -> Response {
        let since = CalendarDay(clock.now, in: .gmt).adding(days: -(Self.reportDays - 1))
        let errors = try await reports.store.errorCounts(since: since)
        let crashes = try await reports.store.crashGroups(since: since)
        let traces = try await reports.store.tracePercentiles(since: since)
        let operations = Dictionary(grouping: traces, by: \.operation).sorted { $0.key < $1.key }.map { operation, days -> [String: Any] in
            let sorted = days.sorted { $0.day.description < $1.day.description }
            let budget = Self.traceBudgets[operation]
            let chart = PercentileChart(
                title: "\(operation) duration per day (ms)",
                days: sorted.map { .init(label: String($0.day.description.suffix(5)), p50: $0.p50, p95: $0.p95, p99: $0.p99) }, budget: budget)
            return [
                "operation": operation, "chart": chart.svg, "budget": budget.map { "\($0) ms" } ?? "",
                "days": sorted.map { day -> [String: Any] in
                    [
                        "day": day.day.description, "count": day.count, "p50": day.p50, "p95": day.p95, "p99": day.p99,
                        "overBudget": budget.map { day.p95 > $0 } ?? false,
                    ]
                },
            ]
        }
        return try renderer.page("reports", title: "Reports", section: "/console/reports", admin: admin, [
            "since": since.description,
            "errors": errors.map { ["code": $0.code, "version": $0.appVersion, "count": $0.count] as [String: Any] },
            "crashes": crashes.map { ["frame": $0.topFrame, "exception": $0.exceptionType ?? "—", "count": $0.count, "version": $0.latestVersion] as [String: Any] },
            "operations": operations,
        ])
    }
}
