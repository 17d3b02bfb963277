import FitBaseCore
import Foundation

extension CycleForecast {
    /// The forecast of a core prediction.
    init(_ prediction: CyclePredictor.Prediction) {
        self.init(
            nextPeriodStart: prediction.nextPeriodStart, nextPeriodRange: prediction.nextPeriodRange, ovulationDate: prediction.ovulationDate,
            fertileWindow: prediction.fertileWindow, confidence: prediction.confidence, patterns: prediction.patterns,
            cyclesUsed: prediction.basis.cyclesUsed, meanCycleLength: prediction.basis.meanLength,
            ovulationSource: prediction.ovulation.source, method: prediction.basis.method
        )
    }
}

extension CycleMonth {
    /// The calendar of a month from the logged periods and the prediction (the live service and the fake alike): phases
    /// from the first logged period on, or from the profile's last period start the prediction rests on until one is.
    static func build(
        year: Int, month: Int, periods: [Period], prediction: CyclePredictor.Prediction?, today: CalendarDay, defaultPeriodLength: Int
    ) -> CycleMonth {
        let firstStart = periods.map(\.start).min() ?? prediction?.lastPeriodStart
        let days = CalendarDay.days(ofMonth: month, year: year).map { day -> CycleCalendarDay in
            let isPeriod = periods.contains { period in
                day >= period.start && day <= (period.end ?? period.start.adding(days: defaultPeriodLength - 1))
            }
            let known = firstStart.map { day >= $0 } ?? false
            let phase = known ? prediction?.position(on: day).phase : nil
            return CycleCalendarDay(
                day: day, phase: phase, isPeriod: isPeriod, isPredictedPeriod: prediction.map { $0.nextPeriodRange.contains(day) && day > today } ?? false,
                isFertile: prediction?.fertileWindow.contains(day) ?? false, isOvulation: prediction?.ovulationDate == day,
                isPredicted: phase != nil && day > today, isToday: day == today
            )
        }
        return CycleMonth(year: year, month: month, days: days)
    }
}
