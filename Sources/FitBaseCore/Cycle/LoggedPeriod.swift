#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``PeriodID``.
public enum LoggedPeriodTag {}
/// Identifies a logged period.
public typealias PeriodID = Identifier<LoggedPeriodTag>

/// A logged period (the `cycleLogs` collection).
public struct LoggedPeriod: Sendable, Equatable {
    public var id: PeriodID
    public var start: CalendarDay
    public var end: CalendarDay?
    public var flow: String?
    public var symptoms: [String]
    public var notes: String?

    public init(id: PeriodID, start: CalendarDay, end: CalendarDay?, flow: String?, symptoms: [String], notes: String?) {
        self.id = id
        self.start = start
        self.end = end
        self.flow = flow
        self.symptoms = symptoms
        self.notes = notes
    }
}
