import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Fertility signals over HTTP and sync, on every engine: logged, listed, removed, sealed, audited, exported and
/// deleted with the account — and predictions that detect ovulation from them.
@Suite struct CycleSignalTests {
    let today = LocalCalendar.today(in: nil)

    private func log(_ client: any TestClientProtocol, _ token: String, _ day: CalendarDay, _ type: String, result: String? = nil, value: Double? = nil, unit: String? = nil) async throws -> [String: Any] {
        var body: [String: Any] = ["date": day.description, "type": type]
        if let result { body["result"] = result }
        if let value { body["value"] = value }
        if let unit { body["unit"] = unit }
        let response = try await client.json(.post, "/v1/cycle/signals", body: body, token: token)
        try #require(response.status == .created, "logging \(body): \(String(buffer: response.body))")
        return try json(response)
    }

    @Test(arguments: TestEngines.all)
    func anLHSurgeMovesThePredictionToOvulationPlusTheLutealPhase(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            // Four periods 30 days apart, the last 15 days ago (today is cycle day 16).
            let starts = [105, 75, 45, 15].map { today.adding(days: -$0) }
            for start in starts {
                #expect(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": start.description], token: token).status == .created)
            }
            // Each past cycle: negative strips on days 14 and 15, positive on day 16: ovulation on day 17, 14 days before the next period.
            for start in starts {
                _ = try await log(client, token, start.adding(days: 13), "lhTest", result: "negative")
                _ = try await log(client, token, start.adding(days: 14), "lhTest", result: "negative")
            }
            var positives: [String] = []
            for start in starts {
                positives.append(try #require(try await log(client, token, start.adding(days: 15), "lhTest", result: "positive")["id"] as? String))
            }
            let temperature = try await log(client, token, today.adding(days: -1), "basalBodyTemperature", value: 97.7, unit: "fahrenheit")
            #expect(temperature["value"] as? Double == 36.5)
            #expect(temperature["unit"] as? String == "celsius")

            // Ovulation is tomorrow (the day after today's positive); her luteal phase is (3 × 14 + 2 × 12.4) / 5 = 13.36 days.
            let predictions = try json(try await client.json(.get, "/v1/cycle/predictions?days=30", token: token))
            #expect(predictions["ovulationSource"] as? String == "detected")
            #expect(predictions["ovulationSignals"] as? [String] == ["lhTest"])
            #expect(predictions["ovulationDate"] as? String == today.adding(days: 1).description)
            #expect(predictions["nextPeriodStart"] as? String == today.adding(days: 14).description)
            let basis = try #require(predictions["basis"] as? [String: Any])
            #expect(basis["method"] as? String == "ovulation")
            #expect(basis["lutealCyclesUsed"] as? Int == 3)
            #expect(abs((basis["lutealLength"] as? Double ?? 0) - 13.36) < 1e-9)
            // The phases follow the detected ovulation: ovulatory from today (the day before ovulation) for three days.
            let calendar = try #require(predictions["calendar"] as? [[String: Any]])
            let fromToday = calendar.filter { $0["predicted"] as? Bool == true }.map { $0["phase"] as? String ?? "" }
            #expect(Array(fromToday.prefix(4)) == ["ovulatory", "ovulatory", "ovulatory", "luteal"])
            let current = try json(try await client.json(.get, "/v1/cycle/current", token: token))
            #expect(current["phase"] as? String == "ovulatory")
            #expect(current["confidence"] as? String == "high")

            // Each complete cycle shows the ovulation detected in it; the current one has no length and none yet.
            let history = try #require(try json(try await client.json(.get, "/v1/cycle/history", token: token))["items"] as? [[String: Any]])
            let ovulations = history.map { ($0["ovulation"] as? [String: Any])?["date"] as? String }
            #expect(ovulations == [nil] + starts.dropLast().reversed().map { $0.adding(days: 16).description })
            #expect(history.dropFirst().allSatisfy { ($0["ovulation"] as? [String: Any])?["source"] as? String == "detected" })

            // Without today's positive, the prediction falls back to the cycle lengths.
            #expect(try await client.json(.delete, "/v1/cycle/signals/\(try #require(positives.last))", token: token).status == .noContent)
            let fallback = try json(try await client.json(.get, "/v1/cycle/predictions", token: token))
            #expect(fallback["ovulationSource"] as? String == "estimated")
            #expect((fallback["basis"] as? [String: Any])?["method"] as? String == "cycleHistory")
            #expect(fallback["nextPeriodStart"] as? String == today.adding(days: 15).description)
        }
    }

    @Test(arguments: TestEngines.all)
    func signalsAreListedByDayAndBelongToTheirOwnerOnly(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let owner = try await client.signUp()
            let other = try await client.signUp()
            for back in [9, 3, 6, 1] {
                _ = try await log(client, owner.accessToken, today.adding(days: -back), "cervicalMucus", result: back == 1 ? "eggWhite" : "creamy")
            }
            let all = try #require(try json(try await client.json(.get, "/v1/cycle/signals", token: owner.accessToken))["items"] as? [[String: Any]])
            #expect(all.map { $0["date"] as? String } == [9, 6, 3, 1].map { today.adding(days: -$0).description })
            #expect(all.last?["result"] as? String == "eggWhite")
            #expect(all.last?["value"] == nil)
            let window = try json(try await client.json(
                .get, "/v1/cycle/signals?from=\(today.adding(days: -6))&to=\(today.adding(days: -2))&limit=1", token: owner.accessToken
            ))
            #expect((window["items"] as? [[String: Any]])?.map { $0["date"] as? String } == [today.adding(days: -6).description])
            let cursor = try #require(window["nextCursor"] as? String)
            let second = try json(try await client.json(
                .get, "/v1/cycle/signals?from=\(today.adding(days: -6))&to=\(today.adding(days: -2))&limit=1&cursor=\(cursor)", token: owner.accessToken
            ))
            #expect((second["items"] as? [[String: Any]])?.map { $0["date"] as? String } == [today.adding(days: -3).description])
            #expect(second["nextCursor"] == nil)
            let problem = try expectProblem(try await client.json(.get, "/v1/cycle/signals?from=yesterday", token: owner.accessToken), .invalidRequest)
            #expect((problem["errors"] as? [[String: String]])?.first?["field"] == "from")

            let id = try #require(all.first?["id"] as? String)
            #expect(try await client.json(.delete, "/v1/cycle/signals/\(id)", token: other.accessToken).status == .notFound)
            #expect((try json(try await client.json(.get, "/v1/cycle/signals", token: other.accessToken))["items"] as? [Any])?.isEmpty == true)
            #expect(try await client.json(.delete, "/v1/cycle/signals/\(id)", token: owner.accessToken).status == .noContent)
            #expect(try await client.json(.delete, "/v1/cycle/signals/\(id)", token: owner.accessToken).status == .notFound)
            #expect((try json(try await client.json(.get, "/v1/cycle/signals", token: owner.accessToken))["items"] as? [Any])?.count == 3)
        }
    }

    @Test func badSignalsAreRefusedNamingTheField() async throws {
        try await withApp(.sqlite) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            func errors(_ body: [String: Any]) async throws -> [String] {
                let response = try await client.json(.post, "/v1/cycle/signals", body: body, token: token)
                #expect(response.status == .badRequest)
                return (try json(response)["errors"] as? [[String: String]] ?? []).compactMap { $0["field"] }
            }
            #expect(try await errors(["date": today.adding(days: 1).description, "type": "lhTest", "result": "positive"]) == ["date"])
            #expect(try await errors(["date": today.description, "type": "lhTest"]) == ["result"])
            #expect(try await errors(["date": today.description, "type": "lhTest", "result": "positive", "value": 1]) == ["value"])
            #expect(try await errors(["date": today.description, "type": "basalBodyTemperature", "value": 39.2]) == ["value"])
            #expect(try await errors(["date": today.description, "type": "basalBodyTemperature", "value": 36.5, "unit": "fahrenheit"]) == ["value"])
            #expect(try await errors(["date": today.description, "type": "cervicalMucus", "result": "positive"]) == ["result"])
            #expect(try await errors(["date": "2026-02-30", "type": "wristTemperature", "value": 0.2]) == ["date"])
            #expect(try await errors(["date": today.description, "type": "bloodTest"]) == ["type"])
            #expect(try await errors(["date": today.description, "type": "basalBodyTemperature", "value": 36.5, "unit": "kelvin"]) == ["unit"])
            // Nothing of the refused ones was written.
            let count = try await app.database.withConnection { db in
                try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("cycle_signals").first()?.decode(column: "n", as: Int.self)
            }
            #expect(count == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func signalsAreSealedAuditedSyncedExportedAndDeletedWithTheAccount(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            let user = UserID(rawValue: try #require(UUID(uuidString: account.id)))
            // A day nothing else of the account mentions, so finding it in the file would mean it is in clear.
            let charted = today.adding(days: -200)
            _ = try await log(client, token, charted, "basalBodyTemperature", value: 36.789)
            let pushedID = UUID().uuidString.lowercased()
            let pushed = try await SyncPushTests.push(client, token, [
                SyncPushTests.mutation("cycleSignals", pushedID, data: ["date": today.adding(days: -1).description, "type": "cervicalMucus", "result": "eggWhite"]),
                SyncPushTests.mutation("cycleSignals", UUID().uuidString, data: ["date": today.description, "type": "lhTest", "result": "maybe"]),
            ])
            #expect(pushed.map { $0["status"] as? String } == ["applied", "rejected"])
            let changes = try #require(try json(try await client.json(.get, "/v1/sync/changes", token: token))["changes"] as? [[String: Any]])
            let signals = changes.filter { $0["collection"] as? String == "cycleSignals" }
            #expect(signals.count == 2)
            #expect(signals.contains { $0["id"] as? String == pushedID && ($0["data"] as? [String: Any])?["result"] as? String == "eggWhite" })

            let export = try #require(try json(try await client.json(.get, "/v1/me/export", token: token))["sections"] as? [String: Any])
            let exported = try #require(export["cycleSignals"] as? [[String: Any]])
            #expect(exported.count == 2)
            #expect(exported.contains { $0["value"] as? Double == 36.789 && $0["unit"] as? String == "celsius" })
            _ = try await client.json(.get, "/v1/cycle/signals", token: token)
            let trail = try #require(try json(try await client.json(.get, "/v1/me/audit?limit=100", token: token))["items"] as? [[String: Any]])
            let seen = Set(trail.map { "\($0["resource"] as? String ?? "") \($0["action"] as? String ?? "")" })
            #expect(seen.isSuperset(of: ["cycleSignals write", "cycleSignals sync", "cycleSignals read", "cycleSignals export"]))

            try await SealedCycleDataTests.expectUnreadable(["36.789", "eggWhite", charted.description], engine: engine, in: app.database, at: app.testDatabase)
            #expect(try await AuditLog(database: app.database, clock: .system).verify().firstBreak == nil)

            #expect(try await client.json(.delete, "/v1/me", token: token).status == .noContent)
            let left = try await app.database.withConnection { db in
                try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("cycle_signals").where("user_id", .equal, user.rawValue)
                    .first()?.decode(column: "n", as: Int.self)
            }
            #expect(left == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func healthKitSamplesBecomeSignalsAndPeriodsOnce(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            func sample(_ type: String, _ day: CalendarDay, _ value: Double) -> [String: Any] {
                ["uuid": UUID().uuidString, "type": type, "date": day.description, "value": value]
            }
            let starts = [75, 45, 15].map { today.adding(days: -$0) }
            var samples = starts.flatMap { start in
                [3.0, 4, 2, 2].enumerated().map { sample("HKCategoryTypeIdentifierMenstrualFlow", start.adding(days: $0.offset), $0.element) }
            }
            samples.append(sample("HKCategoryTypeIdentifierOvulationTestResult", today.adding(days: -2), 1))
            samples.append(sample("HKCategoryTypeIdentifierOvulationTestResult", today, 2))
            let imported = try json(try await client.json(.post, "/v1/cycle/healthkit", body: ["samples": samples], token: token))
            #expect(imported["signals"] as? Int == 2)
            #expect(imported["periods"] as? Int == 3)

            let history = try #require(try json(try await client.json(.get, "/v1/cycle/history", token: token))["items"] as? [[String: Any]])
            let periods = history.compactMap { $0["period"] as? [String: Any] }
            #expect(periods.map { $0["startDate"] as? String } == starts.reversed().map(\.description))
            #expect(periods.allSatisfy { $0["flow"] as? String == "heavy" })
            #expect(periods.first?["endDate"] as? String == starts.last?.adding(days: 3).description)
            let predictions = try json(try await client.json(.get, "/v1/cycle/predictions", token: token))
            #expect(predictions["ovulationSource"] as? String == "detected")
            #expect(predictions["ovulationDate"] as? String == today.adding(days: 1).description)

            // The same samples again: the signals are replaced under their HealthKit ids, the periods already hold the days.
            let again = try json(try await client.json(.post, "/v1/cycle/healthkit", body: ["samples": samples], token: token))
            #expect(again["signals"] as? Int == 2)
            #expect(again["periods"] as? Int == 0)
            #expect((try json(try await client.json(.get, "/v1/cycle/signals", token: token))["items"] as? [Any])?.count == 2)

            let steps = try await client.json(.post, "/v1/cycle/healthkit", body: ["samples": [
                sample("HKQuantityTypeIdentifierStepCount", today, 8_000), sample("HKCategoryTypeIdentifierMenstrualFlow", today.adding(days: 1), 3),
            ]], token: token)
            #expect(steps.status == .badRequest)
            #expect((try json(steps)["errors"] as? [[String: String]])?.compactMap { $0["field"] } == ["samples[0].type", "samples[1].date"])
        }
    }

    /// An app that syncs HealthKit sends its cycle samples with the rest of the health upload: they become signals and
    /// periods in the same transaction, each checked on its own, and the other samples are stored as before.
    @Test(arguments: TestEngines.all)
    func healthKitCycleSamplesComeThroughTheHealthUpload(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            try await HealthTests.consent(client, token)
            // Midnight UTC: the same day in the account's default time zone, and never in the future.
            func sample(_ type: String, _ day: CalendarDay, _ value: Double?, unit: String? = nil, id: String = UUID().uuidString) -> [String: Any] {
                var sample: [String: Any] = ["id": id, "type": type, "start": "\(day)T00:00:00Z", "sourceId": "com.apple.Health"]
                if let value { sample["value"] = value }
                if let unit { sample["unit"] = unit }
                return sample
            }
            let starts = [75, 45, 15].map { today.adding(days: -$0) }
            var samples = starts.flatMap { start in [3.0, 4, 2].enumerated().map { sample("menstrualFlow", start.adding(days: $0.offset), $0.element) } }
            samples.append(sample("ovulationTestResult", today.adding(days: -2), 1))
            samples.append(sample("ovulationTestResult", today, 2))
            samples.append(sample("basalBodyTemperature", today.adding(days: -1), 97.9, unit: "degF"))
            samples.append(["id": UUID().uuidString, "type": "heartRate", "value": 61, "start": "\(today.adding(days: -1))T00:00:00Z", "sourceId": "com.apple.Health"])
            // Refused one by one, each naming its field: a category value HealthKit does not have, a temperature no
            // thermometer reads, a unit on a category, an id that is not a UUID.
            samples.append(sample("ovulationTestResult", today, 7))
            samples.append(sample("basalBodyTemperature", today, 41.2))
            samples.append(sample("cervicalMucusQuality", today, 3, unit: "degC"))
            samples.append(sample("menstrualFlow", today, 2, id: "not-a-uuid"))
            let uploaded = try json(try await client.json(.post, "/v1/health/samples", body: ["samples": samples], token: token))
            #expect(uploaded["created"] as? Int == 13)
            #expect(uploaded["rejected"] as? Int == 4)
            let results = try #require(uploaded["results"] as? [[String: Any]])
            let fields = results.compactMap { ($0["problem"] as? [String: Any])?["errors"] as? [[String: String]] }.map { $0.compactMap { $0["field"] } }
            #expect(fields == [["samples[13].value"], ["samples[14].value"], ["samples[15].unit"], ["samples[16].id"]])

            let history = try #require(try json(try await client.json(.get, "/v1/cycle/history", token: token))["items"] as? [[String: Any]])
            #expect(history.compactMap { ($0["period"] as? [String: Any])?["startDate"] as? String } == starts.reversed().map(\.description))
            let signals = try #require(try json(try await client.json(.get, "/v1/cycle/signals", token: token))["items"] as? [[String: Any]])
            #expect(signals.count == 3)
            #expect(signals.contains { $0["type"] as? String == "basalBodyTemperature" && ($0["value"] as? Double).map { abs($0 - 36.611) < 0.001 } == true })
            let predictions = try json(try await client.json(.get, "/v1/cycle/predictions", token: token))
            #expect(predictions["ovulationSource"] as? String == "detected")
            #expect(predictions["ovulationDate"] as? String == today.adding(days: 1).description)
            // Only the heart rate is a health sample.
            let stored = try #require(try json(try await client.json(.get, "/v1/health/samples", token: token))["items"] as? [[String: Any]])
            #expect(stored.map { $0["type"] as? String } == ["heartRate"])

            // Another user sending a sample under the id of this user's signal changes nothing of it, and nothing of that
            // upload is kept.
            let other = try await client.signUp()
            try await HealthTests.consent(client, other.accessToken)
            let signalID = try #require(signals.first { $0["type"] as? String == "basalBodyTemperature" }?["id"] as? String)
            let hijack = try await client.json(.post, "/v1/health/samples", body: ["samples": [
                sample("basalBodyTemperature", today, 37.9, id: signalID), sample("heartRate", today, 70),
            ]], token: other.accessToken)
            _ = try expectProblem(hijack, .idTaken)
            #expect((try json(try await client.json(.get, "/v1/health/samples", token: other.accessToken))["items"] as? [Any])?.isEmpty == true)
            let kept = try #require(try json(try await client.json(.get, "/v1/cycle/signals", token: token))["items"] as? [[String: Any]])
            #expect(kept.first { $0["id"] as? String == signalID }?["value"] as? Double == signals.first { $0["id"] as? String == signalID }?["value"] as? Double)
        }
    }
}
