import FitBaseCore
import Foundation
import Hummingbird

/// The Reports page: the apps' errors by code and version, crashes grouped by their innermost frame, and each
/// operation's daily p50/p95/p99 durations on a chart with its budget (seed 004: leaderboard fetches under 2 s).
///
/// Each of the three lists is paged on its own (`?errors=2&crashes=1&operations=3`, page numbers from 1), so the page
/// stays small however many names the apps sent.
extension ConsoleFeature {
    /// Days the page covers, today included.
    static let reportDays = 14
    /// Operations with a duration budget, in milliseconds.
    static let traceBudgets: [String: Int] = ["leaderboard.fetch": 2_000]
    /// Rows of each list a page shows; operations (a chart each) fewer.
    static let reportPageSizes: [ReportList: Int] = [.errors: 50, .crashes: 25, .operations: 10]
    /// The highest page number a list may be asked for.
    static let maximumReportPage = 10_000

    /// A list of the Reports page, named as its page parameter.
    enum ReportList: String, CaseIterable {
        case errors, crashes, operations
    }

    func reportsPage(_ request: Request, _ admin: ConsoleAdmin) async throws -> Response {
        var pages: [ReportList: Int] = [:]
        var errors: [FieldError] = []
        for list in ReportList.allCases {
            guard let text = request.uri.queryParameters.get(list.rawValue) else { pages[list] = 1; continue }
            guard let page = Int(text), (1...Self.maximumReportPage).contains(page) else {
                let message = "must be a page number from 1 to \(Self.maximumReportPage)"
                errors.append(FieldError(field: list.rawValue, message: message))
                continue
            }
            pages[list] = page
        }
        guard errors.isEmpty else { throw Problem.validationFailed(InvalidFields(errors)) }
        func window(_ list: ReportList) -> (limit: Int, offset: Int) {
            let size = Self.reportPageSizes[list] ?? 10
            // One more than shown: whether a next page exists.
            return (size + 1, ((pages[list] ?? 1) - 1) * size)
        }

        let since = CalendarDay(clock.now, in: .gmt).adding(days: -(Self.reportDays - 1))
        let store = reports.store
        let errorCounts = try await store.errorCounts(since: since, limit: window(.errors).limit, offset: window(.errors).offset)
        let crashes = try await store.crashGroups(since: since, limit: window(.crashes).limit, offset: window(.crashes).offset)
        let names = try await store.tracedOperations(
            since: since, limit: window(.operations).limit, offset: window(.operations).offset)
        let shown = Array(names.prefix(Self.reportPageSizes[.operations] ?? 10))
        let traces = try await store.tracePercentiles(since: since, operations: shown)
        let operations = Dictionary(grouping: traces, by: \.operation).sorted { $0.key < $1.key }.map { operation, days -> [String: Any] in
            let sorted = days.sorted { $0.day.description < $1.day.description }
            let budget = Self.traceBudgets[operation]
            let chart = PercentileChart(
                title: "\(operation) duration per day (ms)",
                days: sorted.map { .init(label: String($0.day.description.suffix(5)), p50: $0.p50, p95: $0.p95, p99: $0.p99) }, budget: budget)
            // A Bool, not the text: swift-mustache takes an empty string for true.
            var values: [String: Any] = [
                "operation": operation, "chart": chart.svg, "hasBudget": budget != nil,
                "days": sorted.map { day -> [String: Any] in
                    [
                        "day": day.day.description, "count": day.count, "p50": day.p50, "p95": day.p95, "p99": day.p99,
                        "overBudget": budget.map { day.p95 > $0 } ?? false,
                    ]
                },
            ]
            if let budget { values["budget"] = "\(budget) ms" }
            return values
        }
        let counts: [ReportList: Int] = [.errors: errorCounts.count, .crashes: crashes.count, .operations: names.count]
        return try renderer.page("reports", title: "Reports", section: "/console/reports", admin: admin, [
            "since": since.description,
            "errors": errorCounts.prefix(Self.reportPageSizes[.errors] ?? 50)
                .map { ["code": $0.code, "version": $0.appVersion, "count": $0.count] as [String: Any] },
            "crashes": crashes.prefix(Self.reportPageSizes[.crashes] ?? 25).map { crash -> [String: Any] in
                ["frame": crash.topFrame, "exception": crash.exceptionType ?? "—", "count": crash.count, "version": crash.latestVersion]
            },
            "operations": operations,
            "pagers": Dictionary(uniqueKeysWithValues: ReportList.allCases.map { list in
                let hasNext = (counts[list] ?? 0) > (Self.reportPageSizes[list] ?? 10)
                return (list.rawValue, Self.reportPager(list, pages: pages, hasNext: hasNext))
            }),
        ])
    }

    /// The previous and next links of `list`, the other lists' pages kept.
    static func reportPager(_ list: ReportList, pages: [ReportList: Int], hasNext: Bool) -> [String: Any] {
        func href(_ page: Int) -> String {
            var moved = pages
            moved[list] = page
            let query = ReportList.allCases.compactMap { other in
                moved[other].flatMap { $0 == 1 ? nil : "\(other.rawValue)=\($0)" }
            }
            let anchor = list == .operations ? "traces" : list.rawValue
            return "/console/reports" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")) + "#\(anchor)"
        }
        let page = pages[list] ?? 1
        var pager: [String: Any] = ["page": page, "any": page > 1 || hasNext, "hasPrevious": page > 1, "hasNext": hasNext]
        if page > 1 { pager["previous"] = href(page - 1) }
        if hasNext { pager["next"] = href(page + 1) }
        return pager
    }
}
