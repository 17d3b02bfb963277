import FitBaseAPI
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

        /// Whether the log has none of these fields (``HistoryStore/sealed(_:of:)`` then seals nothing).
        var isEmpty: Bool {
            energyBefore == nil && energyAfter == nil && notes == nil && cyclePhase == nil && cycleDay == nil
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

        /// The fields of ``json`` read back. They are read by ``JSONValue/parse(_:)`` when they hold what ``json``
        /// writes (`JSONDecoder` cost a sixth of the CPU of listing twenty logs); anything else by `JSONDecoder`, which
        /// decides.
        static func read(_ json: Data) throws -> PrivateFields {
            if case .object(let object)? = JSONValue.parse(json), let fields = PrivateFields(object) { return fields }
            return try JSONDecoder().decode(PrivateFields.self, from: json)
        }

        private init?(_ object: [String: JSONValue]) {
            self.init(energyBefore: nil, energyAfter: nil, notes: nil, cyclePhase: nil, cycleDay: nil)
            for (key, value) in object {
                switch (key, value) {
                case ("energyBefore", .int(let number)): energyBefore = number
                case ("energyAfter", .int(let number)): energyAfter = number
                case ("cycleDay", .int(let number)): cycleDay = number
                case ("notes", .string(let text)): notes = text
                case ("cyclePhase", .string(let text)): cyclePhase = text
                case (_, .null): continue
                default: return nil
                }
            }
        }
    }
}
