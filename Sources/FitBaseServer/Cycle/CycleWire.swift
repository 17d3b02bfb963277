import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of the cycle: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum CycleWire {
    static func wire(_ period: Period) -> Components.Schemas.Period {
        .init(
            id: period.id.description, startDate: period.start.description, endDate: period.end?.description,
            flow: period.flow, symptoms: period.symptoms, notes: period.notes
        )
    }

    static func wire(_ signal: FertilitySignal) -> Components.Schemas.FertilitySignal {
        .init(
            id: signal.id.description, date: signal.date.description, _type: signal.type, result: signal.result, value: signal.celsius,
            unit: signal.celsius == nil ? nil : .celsius
        )
    }

    static func wire(_ ovulation: CyclePredictor.Ovulation) -> Components.Schemas.CycleOvulation {
        .init(date: ovulation.date.description, source: ovulation.source, signals: ovulation.signals)
    }
}
