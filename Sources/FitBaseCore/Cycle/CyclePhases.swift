/// Where a day falls in a cycle: the phase, and when the next one starts.
public struct PhasePosition: Sendable, Equatable {
    public let phase: CyclePhase
    /// 1-based day of the cycle.
    public let cycleDay: Int
    /// Days until the next phase begins (1 on the phase's last day); 0 when the period is late and could start any day.
    public let daysUntilNextPhase: Int
    public let nextPhase: CyclePhase
    /// The cycle has run past its expected length and the period has not been logged yet.
    public let isLate: Bool
}

/// The seed's phase boundaries, scaled to a cycle's length, with each phase at least one day long.
///
/// For a cycle of `L` days and a period of `P` days: menstrual is days 1…P; follicular runs to day
/// `round(0.46 L)`; ovulatory to day `round(0.57 L)`; luteal to day L (halves round up). When a short cycle and a long
/// period would leave a phase empty, the later boundaries move one day on, so every day has exactly one phase and
/// every phase at least one day. Days past L stay luteal and are flagged late — unlike the seed's modulo, a late
/// period never wraps into a new cycle.
///
/// When the cycle's ovulation is known (detected from LH tests or temperatures, ``OvulationDetector``), the ovulatory
/// phase is the three days centred on it (as the seed's scaled days 14–16 are around day 15 of a 28-day cycle, the
/// day 14 days before the next start) and the luteal phase follows from the day after them; the follicular phase
/// ends the day before.
public enum CyclePhases {
    /// The last day of each phase, in order, for a cycle of `length` days with `periodLength` days of bleeding.
    public static func boundaries(length: Int, periodLength: Int) -> (menstrual: Int, follicular: Int, ovulatory: Int, luteal: Int) {
        let length = max(length, 4)
        let menstrual = min(max(periodLength, 1), length - 3)
        let follicular = max(menstrual + 1, Int((Double(length) * 0.46).rounded()))
        let ovulatory = min(max(follicular + 1, Int((Double(length) * 0.57).rounded())), length - 1)
        return (menstrual, min(follicular, ovulatory - 1), ovulatory, length)
    }

    /// The last day of each phase when ovulation falls on 1-based `ovulationDay` (scaled boundaries when `nil`).
    public static func boundaries(length: Int, periodLength: Int, ovulationDay: Int?) -> (menstrual: Int, follicular: Int, ovulatory: Int, luteal: Int) {
        guard let ovulationDay else { return boundaries(length: length, periodLength: periodLength) }
        let length = max(length, 4)
        let menstrual = min(max(periodLength, 1), length - 3)
        let follicular = max(menstrual + 1, ovulationDay - 2)
        let ovulatory = min(max(follicular + 1, ovulationDay + 1), length - 1)
        return (menstrual, min(follicular, ovulatory - 1), ovulatory, length)
    }

    /// The phase of 1-based `cycleDay` in a cycle expected to last `length` days.
    /// With `ovulationDay`, the boundaries move with the known ovulation.
    public static func position(cycleDay: Int, length: Int, periodLength: Int, ovulationDay: Int? = nil) -> PhasePosition {
        let bounds = boundaries(length: length, periodLength: periodLength, ovulationDay: ovulationDay)
        let day = max(cycleDay, 1)
        if day > bounds.luteal {
            return PhasePosition(phase: .luteal, cycleDay: day, daysUntilNextPhase: 0, nextPhase: .menstrual, isLate: true)
        }
        let (phase, end, next): (CyclePhase, Int, CyclePhase) =
            day <= bounds.menstrual ? (.menstrual, bounds.menstrual, .follicular)
            : day <= bounds.follicular ? (.follicular, bounds.follicular, .ovulatory)
            : day <= bounds.ovulatory ? (.ovulatory, bounds.ovulatory, .luteal)
            : (.luteal, bounds.luteal, .menstrual)
        return PhasePosition(phase: phase, cycleDay: day, daysUntilNextPhase: end - day + 1, nextPhase: next, isLate: false)
    }
}
