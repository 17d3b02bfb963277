#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which 15-minute slots of a summary's range can be summed from slot totals: those inside `[from, to)` that no
/// bucket edge cuts. The samples of the other parts of the range (``sampleRanges``) are read one by one.
public struct HealthSummaryPlan: Sendable, Equatable {
    /// Slots that may use totals (those in ``excluded`` aside).
    public let slots: Range<Int64>
    /// Slots a bucket edge cuts.
    public let excluded: Set<Int64>
    /// The parts of `[from, to)` whose by-start samples are not in any used slot, as `[lower, upper)` pairs.
    public let sampleRanges: [(lower: Date, upper: Date)]

    var isEmpty: Bool { slots.isEmpty }

    public func usesTotals(of slot: Int64) -> Bool {
        slots.contains(slot) && !excluded.contains(slot)
    }

    /// `edges`: the buckets' edges, seconds since the reference date, first `from` and last `to`.
    init(edges: [TimeInterval]) {
        guard let first = edges.first, let last = edges.last, first < last else {
            (slots, excluded, sampleRanges) = (0..<0, [], [])
            return
        }
        let from = Date(timeIntervalSinceReferenceDate: first)
        let to = Date(timeIntervalSinceReferenceDate: last)
        let length = Double(HealthSlots.seconds)
        let lower = Int64((from.timeIntervalSince1970 / length).rounded(.up))
        let upper = Int64((to.timeIntervalSince1970 / length).rounded(.down))
        guard lower < upper else {
            (slots, excluded, sampleRanges) = (0..<0, [], [(from, to)])
            return
        }
        slots = lower..<upper
        var excluded: Set<Int64> = []
        for edge in edges.dropFirst().dropLast() {
            let instant = Date(timeIntervalSinceReferenceDate: edge)
            let slot = HealthSlots.slot(of: instant)
            if HealthSlots.start(of: slot) != instant, slots.contains(slot) { excluded.insert(slot) }
        }
        self.excluded = excluded
        var ranges: [(lower: Date, upper: Date)] = []
        if from < HealthSlots.start(of: lower) { ranges.append((from, HealthSlots.start(of: lower))) }
        for slot in excluded.sorted() { ranges.append((HealthSlots.start(of: slot), HealthSlots.start(of: slot + 1))) }
        if HealthSlots.start(of: upper) < to { ranges.append((HealthSlots.start(of: upper), to)) }
        sampleRanges = ranges
    }

    public static func == (left: HealthSummaryPlan, right: HealthSummaryPlan) -> Bool {
        left.slots == right.slots && left.excluded == right.excluded
            && left.sampleRanges.elementsEqual(right.sampleRanges) { $0.lower == $1.lower && $0.upper == $1.upper }
    }
}
