import FitBaseCore
import Foundation
import Testing

@Suite struct FertilitySignalRulesTests {
    private let today = CalendarDay("2026-03-20")!

    private func check(_ draft: FertilitySignalDraft) throws(InvalidFields) -> FertilitySignal {
        try FertilitySignalRules.checked(draft, id: FertilitySignalID(), today: today)
    }

    private func fields(_ draft: FertilitySignalDraft) -> [String] {
        do {
            _ = try check(draft)
            return []
        } catch {
            return error.errors.map(\.field)
        }
    }

    @Test func eachTypeKeepsItsReading() throws {
        #expect(try check(.init(date: "2026-03-18", type: "lhTest", result: "positive")).reading == .lhTest(.positive))
        #expect(try check(.init(date: "2026-03-18", type: "cervicalMucus", result: "eggWhite")).reading == .cervicalMucus(.eggWhite))
        #expect(try check(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 36.55)).reading == .basalBodyTemperature(celsius: 36.55))
        #expect(try check(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 98.6, unit: "fahrenheit")).reading == .basalBodyTemperature(celsius: 37.0))
        #expect(try check(.init(date: "2026-03-18", type: "wristTemperature", value: 0.54, unit: "fahrenheit")).reading == .wristTemperature(deviationCelsius: 0.3))
    }

    @Test func temperaturesOutsideTheBodysRangeAreRefused() {
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 34.9)) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 38.6)) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 36.5, unit: "fahrenheit")) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", value: .nan)) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature")) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "wristTemperature", value: 3.5)) == ["value"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", value: 36.5, unit: "kelvin")) == ["unit"])
    }

    @Test func everyBrokenRuleIsReportedInFieldOrder() {
        #expect(fields(.init(date: "2026-03-21", type: "lhTest", result: "maybe", value: 1)) == ["date", "result", "value"])
        #expect(fields(.init(date: "18/03/2026", type: "bloodTest")) == ["date", "type"])
        #expect(fields(.init(date: "2026-03-18", type: "cervicalMucus", result: "positive", unit: "celsius")) == ["result", "unit"])
        #expect(fields(.init(date: "2026-03-18", type: "basalBodyTemperature", result: "positive", value: 36.5)) == ["result"])
    }

    @Test func theJSONIsTheAPIs() throws {
        let signal = FertilitySignal(date: CalendarDay("2026-03-18")!, reading: .basalBodyTemperature(celsius: 36.6))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(signal)) as? [String: Any]
        #expect(json?["type"] as? String == "basalBodyTemperature")
        #expect(json?["value"] as? Double == 36.6)
        #expect(json?["unit"] as? String == "celsius")
        #expect(json?["result"] == nil)
        #expect(try JSONDecoder().decode(FertilitySignal.self, from: JSONEncoder().encode(signal)) == signal)
    }
}
