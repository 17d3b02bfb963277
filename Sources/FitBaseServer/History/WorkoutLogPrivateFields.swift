import FitBaseCore
import Foundation

extension HistoryStore {
    /// The fields of a log that say something about the body: sealed under the owner's data key.
    struct PrivateFields: Codable, Equatable {
        var energyBefore: Int?
        var energyAfter: Int?
        var notes: String?
        var cyclePhase: String?
        var cycleDay: Int?

        init(_ log: WorkoutLog) {
            self.init(energyBefore: log.energyBefore, energyAfter: log.energyAfter, notes: log.notes, cyclePhase: log.cyclePhase?.rawValue, cycleDay: log.cycleDay)
        }

        init(energyBefore: Int?, energyAfter: Int?, notes: String?, cyclePhase: String?, cycleDay: Int?) {
            self.energyBefore = energyBefore
            self.energyAfter = energyAfter
            self.notes = notes
            self.cyclePhase = cyclePhase
            self.cycleDay = cycleDay
        }

        /// The fields as JSON (absent ones left out, as `JSONEncoder` does), written by hand: the encoder cost 3 % of
        /// the CPU of a workout log write. Read back with `JSONDecoder`.
        var json: Data {
            var parts: [String] = []
            if let cycleDay { parts.append(#""cycleDay":\#(cycleDay)"#) }
            if let cyclePhase { parts.append(#""cyclePhase":"# + AuditChain.jsonString(cyclePhase)) }
            if let energyAfter { parts.append(#""energyAfter":\#(energyAfter)"#) }
            if let energyBefore { parts.append(#""energyBefore":\#(energyBefore)"#) }
            if let notes { parts.append(#""notes":"# + AuditChain.jsonString(notes)) }
            return Data(("{" + parts.joined(separator: ",") + "}").utf8)
        }
    }
}
