import FitBaseCore
import Foundation

/// The dashboard's product-analytics panel reads the analytics ingest's daily counts.
extension AnalyticsStore: ConsoleAnalyticsSource {
    func dailyEventCounts(since: Date) async throws -> [(event: String, day: String, count: Int)] {
        let from = CalendarDay(since, in: .gmt)
        // Events are kept by the UTC day they happened on; a device's clock may be a little ahead.
        return try await dailyCounts(from: from, to: from.adding(days: 400)).map { ($0.name, $0.day.description, $0.count) }
    }
}
