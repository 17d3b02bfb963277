#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``PeriodID``.
public enum PeriodTag {}
/// Identifies a logged period.
public typealias PeriodID = Identifier<PeriodTag>

/// How heavy a period's flow is (the contract's enum).
public enum PeriodFlow: String, Sendable, Hashable, Codable, CaseIterable {
    case spotting, light, medium, heavy
}

/// A logged period: the one type of it from the server's store to the app's screens (the sync collection is named
/// `cycleLogs` on the wire, for the clients that know it so). Its JSON is the API's: `startDate`, `endDate` written
/// `YYYY-MM-DD` in the user's time zone. A period is valid when ``PeriodRules`` passes it.
public struct Period: Sendable, Hashable, Identifiable, Codable {
    /// Made on the device, so a period can be logged offline.
    public var id: PeriodID
    /// The first day of bleeding.
    public var start: CalendarDay
    /// The last day, once known.
    public var end: CalendarDay?
    public var flow: PeriodFlow?
    /// Symptoms, as the app names them.
    public var symptoms: [String]
    /// The user's notes.
    public var notes: String?

    /// A period from its fields; a new one gets a fresh id.
    public init(id: PeriodID = PeriodID(), start: CalendarDay, end: CalendarDay? = nil, flow: PeriodFlow? = nil, symptoms: [String] = [], notes: String? = nil) {
        self.id = id
        self.start = start
        self.end = end
        self.flow = flow
        self.symptoms = symptoms
        self.notes = notes
    }

    private enum CodingKeys: String, CodingKey {
        case id, flow, symptoms, notes
        case start = "startDate"
        case end = "endDate"
    }
}

extension PeriodDraft {
    /// The draft of a period, to check it again (``PeriodRules``) before it is saved.
    public init(_ period: Period) {
        self.init(
            startDate: period.start.description, endDate: period.end?.description, flow: period.flow?.rawValue, symptoms: period.symptoms,
            notes: period.notes
        )
    }
}
