import FitBaseAPI
import FitBaseCore
import Foundation

/// How the cycle cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum CycleWire {
    static func wire(_ phase: CyclePhase) -> Components.Schemas.CyclePhase {
        .init(rawValue: phase.rawValue) ?? .luteal
    }

    static func wire(_ period: Period) -> Components.Schemas.Period {
        .init(
            id: period.id.description, startDate: period.start.description, endDate: period.end?.description,
            flow: period.flow.flatMap { .init(rawValue: $0.rawValue) }, symptoms: period.symptoms, notes: period.notes
        )
    }
}
