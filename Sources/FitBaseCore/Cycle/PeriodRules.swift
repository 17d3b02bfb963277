/// A logged period as its writer sent it (REST body or pushed mutation), before any rule is checked.
public struct PeriodDraft: Sendable, Equatable {
    /// `YYYY-MM-DD` when valid.
    public var startDate: String
    /// `YYYY-MM-DD` when valid.
    public var endDate: String?
    /// `spotting`, `light`, `medium` or `heavy` (the contract's enum).
    public var flow: String?
    /// Symptoms as sent, before they are trimmed.
    public var symptoms: [String]?
    /// Free text.
    public var notes: String?

    /// A draft from the input's fields.
    public init(startDate: String, endDate: String? = nil, flow: String? = nil, symptoms: [String]? = nil, notes: String? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.flow = flow
        self.symptoms = symptoms
        self.notes = notes
    }
}

/// The rules of a logged period: dates written `YYYY-MM-DD`, a start not after today in the user's time zone, an end
/// on the start or within 20 days after it, a flow of ``PeriodFlow``; symptoms are trimmed, blank ones dropped, at most 30 kept.
public enum PeriodRules {
    /// How many symptoms a period keeps.
    public static let maximumSymptoms = 30

    /// The period `draft` describes, checked against `today` in the user's time zone; throws every broken rule at once,
    /// in field order.
    public static func checked(_ draft: PeriodDraft, id: PeriodID, today: CalendarDay) throws(InvalidFields) -> Period {
        var errors: [FieldError] = []
        let start = CalendarDay(draft.startDate)
        if start == nil { errors.append(.init(field: "startDate", message: "must be a date written YYYY-MM-DD")) }
        if let start, start > today { errors.append(.init(field: "startDate", message: "must not be in the future")) }
        let end = draft.endDate.flatMap(CalendarDay.init)
        if draft.endDate != nil && end == nil { errors.append(.init(field: "endDate", message: "must be a date written YYYY-MM-DD")) }
        if let start, let end, !(0...19).contains(start.days(until: end)) {
            errors.append(.init(field: "endDate", message: "must be on or after startDate and within 20 days of it"))
        }
        let flow = draft.flow.flatMap(PeriodFlow.init(rawValue:))
        if draft.flow != nil && flow == nil {
            errors.append(.init(field: "flow", message: "must be one of \(PeriodFlow.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        guard let start, errors.isEmpty else { throw InvalidFields(errors) }
        let symptoms = (draft.symptoms ?? []).map { $0.trimmingScalars(where: \.isSpaceOrTab) }.filter { !$0.isEmpty }
        return Period(id: id, start: start, end: end, flow: flow, symptoms: Array(symptoms.prefix(maximumSymptoms)), notes: draft.notes)
    }

    /// Whether `period` starts the day another of `existing` starts: one period per first day per user (the server
    /// answers 409 ``ProblemCode/periodExists``).
    public static func clashes(_ period: Period, with existing: [Period]) -> Bool {
        existing.contains { $0.start == period.start && $0.id != period.id }
    }
}
