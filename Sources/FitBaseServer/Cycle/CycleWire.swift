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
}
