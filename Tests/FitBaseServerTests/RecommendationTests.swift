import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Today's and the week's recommendations over HTTP: keeping, renewal, refresh, and the language-model path.
@Suite struct RecommendationTests {
    /// Sets up a follicular (cycle day 10) intermediate user in Kolkata and returns their token.
    /// Verified in `database` when given (only verified accounts reach the language model).
    static func cycleUser(_ client: any TestClientProtocol, verifiedIn database: Database? = nil) async throws -> String {
        try await cycleAccount(client, verifiedIn: database).accessToken
    }

    static func cycleAccount(_ client: any TestClientProtocol, verifiedIn database: Database? = nil) async throws -> TestAccount {
        let account = try await client.signUp()
        if let database {
            try await database.transaction { db in
                try await db.update("users").set("email_verified_at", to: Date.storageNow).where("id", .equal, UUID(uuidString: account.id)).run()
            }
        }
        let token = account.accessToken
        let profile = try await client.json(.patch, "/v1/me", body: [
            "fitnessLevel": "intermediate", "goals": ["buildStrength"], "preferredWorkoutTypes": ["pilates"], "timeZone": "Asia/Kolkata",
        ], token: token)
        #expect(profile.status == .ok)
        let today = LocalCalendar.today(in: "Asia/Kolkata")
        let period = try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.adding(days: -9).description], token: token)
        #expect(period.status == .created)
        return account
    }

    /// When the kept answer of `account` was made, to the microsecond (the API shows whole seconds).
    static func keptAt(_ account: TestAccount, in database: Database) async throws -> Date? {
        let user = try #require(UUID(uuidString: account.id))
        return try await database.withConnection { db in
            try await db.select().column("updated_at").from("daily_recommendations").where("user_id", .equal, user).first()?
                .decode(column: "updated_at", as: Date.self)
        }
    }

    static func today(_ client: any TestClientProtocol, _ token: String, query: String = "") async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/recommendations/today" + query, token: token)
        try #require(response.status == .ok, "today answered \(response.status): \(String(buffer: response.body))")
        return try json(response)
    }

    static func workouts(_ answer: [String: Any]) -> [[String: Any]] {
        (answer["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["workout"] as? [String: Any] }
    }

    static func ids(_ answer: [String: Any]) -> [String] { workouts(answer).compactMap { $0["id"] as? String } }

    @Test(arguments: TestEngines.all)
    func todayIsKeptForTheDayAndRenewedWhenItsInputsChange(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { client, app in
            let database = app.database
            let account = try await Self.cycleAccount(client)
            let token = account.accessToken
            let first = try await Self.today(client, token)
            #expect(first["source"] as? String == "rules")
            #expect(first["phase"] as? String == "follicular")
            #expect(first["cycleDay"] as? Int == 10)
            #expect(first["date"] as? String == LocalCalendar.today(in: "Asia/Kolkata").description)
            #expect(Self.ids(first).count == 3)
            #expect(Self.workouts(first).allSatisfy { $0["isPremium"] as? Bool == false })
            #expect((first["phaseGuidance"] as? String)?.hasPrefix(CyclePhase.follicular.guidance) == true)
            #expect((first["recommendations"] as? [[String: Any]])?.map { $0["priority"] as? Int } == [1, 2, 3])
            #expect((first["recommendations"] as? [[String: Any]])?.allSatisfy { ($0["reason"] as? String)?.isEmpty == false } == true)
            #expect((first["alternativeIfLowEnergy"] as? [String: Any])?["intensity"] as? String == "low")
            let firstKept = try #require(try await Self.keptAt(account, in: database))

            // Kept: the same answer, not made again.
            let again = try await Self.today(client, token)
            #expect(Self.ids(again) == Self.ids(first))
            #expect(try await Self.keptAt(account, in: database) == firstKept)

            // Logging the top pick renews the answer, which then moves away from it.
            let top = try #require(Self.workouts(first).first)
            let logged = try await client.json(.post, "/v1/history", body: [
                "workoutId": try #require(top["id"] as? String), "completedAt": Date.now.addingTimeInterval(-60).formatted(.iso8601),
                "duration": 30,
            ], token: token)
            #expect(logged.status == .created)
            let afterWorkout = try await Self.today(client, token)
            let afterWorkoutKept = try #require(try await Self.keptAt(account, in: database))
            #expect(afterWorkoutKept > firstKept)
            #expect(!Self.ids(afterWorkout).contains(top["id"] as? String ?? ""))

            // A profile change renews it too: bodyweight only.
            let equipment = try await client.json(.patch, "/v1/me", body: ["availableEquipment": []], token: token)
            #expect(try json(equipment)["availableEquipment"] as? [String] == [])
            let bodyweight = try await Self.today(client, token)
            #expect(try #require(try await Self.keptAt(account, in: database)) > afterWorkoutKept)
            #expect(Self.workouts(bodyweight).allSatisfy { $0["equipment"] as? [String] == ["none"] })

            // A refresh brings three others, and is what is kept afterwards.
            let refreshed = try json(try await client.json(.post, "/v1/recommendations/refresh", token: token))
            #expect(Set(Self.ids(refreshed)).isDisjoint(with: Self.ids(bodyweight)))
            #expect(Self.ids(try await Self.today(client, token)) == Self.ids(refreshed))

            // Energy is an input: a low day asks for gentle work.
            let tired = try await Self.today(client, token, query: "?energy=low")
            #expect(tired["energy"] as? String == "low")
            #expect(Self.workouts(tired).first?["intensity"] as? String == "low")
            let bad = try expectProblem(try await client.json(.get, "/v1/recommendations/today?energy=exhausted", token: token), .invalidRequest)
            #expect((bad["errors"] as? [[String: Any]])?.first?["field"] as? String == "energy")
        }
    }

    @Test func withoutCycleDataTheAnswerFollowsThePreferences() async throws {
        try await withApp(.sqlite, options: .init(demoCatalog: true)) { client, _ in
            let account = try await client.signUp()
            try await client.json(.patch, "/v1/me", body: ["preferredWorkoutTypes": ["yoga"], "goals": ["reduceStress"]], token: account.accessToken)
            let answer = try await Self.today(client, account.accessToken)
            #expect(answer["phase"] == nil)
            #expect(Self.workouts(answer).first?["type"] as? String == "yoga")
            #expect((answer["phaseGuidance"] as? String)?.contains("Log a period") == true)
        }
    }

    @Test(arguments: TestEngines.all)
    func theWeekFollowsThePhasesWithRestDaysByLevel(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { client, _ in
            let token = try await Self.cycleUser(client)
            let response = try await client.json(.get, "/v1/recommendations/week", token: token)
            #expect(response.status == .ok)
            let week = try json(response)
            let days = try #require(week["days"] as? [[String: Any]])
            let today = LocalCalendar.today(in: "Asia/Kolkata")
            #expect(week["startDate"] as? String == today.description)
            #expect(week["source"] as? String == "rules")
            #expect(days.map { $0["date"] as? String } == (0..<7).map { today.adding(days: $0).description })
            #expect(days.map { $0["cycleDay"] as? Int } == Array(10...16))
            #expect(days.map { $0["predicted"] as? Bool } == [false] + Array(repeating: true, count: 6))
            #expect(days.filter { $0["isRestDay"] as? Bool == false }.count == 4)  // intermediate
            for day in days {
                let rest = day["isRestDay"] as? Bool == true
                #expect((day["workout"] == nil) == rest)
                #expect((day["note"] as? String)?.isEmpty == false)
            }
            let picks = days.compactMap { ($0["workout"] as? [String: Any])?["id"] as? String }
            #expect(Set(picks).count == picks.count)
        }
    }

    // MARK: The language model

    /// Each account has a daily number of model answers (by tier); past it the rules answer, and the model is not called.
    /// A sign-up with a made-up address costs the operator no model call, and the deployment has a daily budget.
    @Test func onlyVerifiedAccountsReachTheModelWithinTheDeploymentsBudget() async throws {
        try await FakeLanguageModel.run(behaviour: .goodAnswer) { fake in
            var configuration = fake.configuration()
            configuration.dailyBudget = 2
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: configuration)) { client, app in
                let unverified = try await Self.cycleUser(client)
                #expect(try await Self.today(client, unverified)["source"] as? String == "rules")
                #expect(fake.received.isEmpty)
                for _ in 0..<2 {
                    #expect(try await Self.today(client, try await Self.cycleUser(client, verifiedIn: app.database))["source"] as? String == "llm")
                }
                // The budget is spent for everyone, each account's own quota notwithstanding.
                #expect(try await Self.today(client, try await Self.cycleUser(client, verifiedIn: app.database))["source"] as? String == "rules")
                #expect(fake.received.count == 2)
            }
        }
        #expect(try LanguageModelConfiguration.resolve(environment: ["FITBASE_ANTHROPIC_API_KEY": "k", "FITBASE_ANTHROPIC_DAILY_BUDGET": "50"])?.dailyBudget == 50)
    }

    @Test func theModelIsAskedAtMostTheDailyQuota() async throws {
        try await FakeLanguageModel.run(behaviour: .goodAnswer) { fake in
            var configuration = fake.configuration()
            configuration.dailyCallsFree = 2
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: configuration)) { client, app in
                let token = try await Self.cycleUser(client, verifiedIn: app.database)
                #expect(try await Self.today(client, token)["source"] as? String == "llm")
                let second = try json(try await client.json(.post, "/v1/recommendations/refresh", token: token))
                #expect(second["source"] as? String == "llm")
                for energy in ["low", "high", "medium"] {
                    let spent = try json(try await client.json(.post, "/v1/recommendations/refresh?energy=\(energy)", token: token))
                    #expect(spent["source"] as? String == "rules")
                }
                #expect(fake.received.count == 2)
                // Another account has its own quota.
                #expect(try await Self.today(client, try await Self.cycleUser(client, verifiedIn: app.database))["source"] as? String == "llm")
                #expect(fake.received.count == 3)
            }
        }
        #expect(throws: ConfigurationError.self) {
            try LanguageModelConfiguration.resolve(environment: ["FITBASE_ANTHROPIC_API_KEY": "k", "FITBASE_ANTHROPIC_DAILY_CALLS_FREE": "-1"])
        }
        let resolved = try LanguageModelConfiguration.resolve(environment: ["FITBASE_ANTHROPIC_API_KEY": "k", "FITBASE_ANTHROPIC_DAILY_CALLS_PREMIUM": "7"])
        #expect(resolved?.dailyCallsPremium == 7 && resolved?.dailyCallsFree == 10)
    }

    /// An answer is kept per energy level for the day: going back to a level is answered from it, not by the model.
    @Test func eachEnergyLevelsAnswerIsKeptForTheDay() async throws {
        try await FakeLanguageModel.run(behaviour: .goodAnswer) { fake in
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: fake.configuration())) { client, app in
                let token = try await Self.cycleUser(client, verifiedIn: app.database)
                func today(_ energy: String?) async throws -> [String] {
                    let path = energy.map { "/v1/recommendations/today?energy=\($0)" } ?? "/v1/recommendations/today"
                    return Self.ids(try json(try await client.json(.get, path, token: token)))
                }
                let low = try await today("low")
                let high = try await today("high")
                let none = try await today(nil)
                #expect(fake.received.count == 3)
                #expect(try await today("low") == low)
                #expect(try await today("high") == high)
                #expect(try await today(nil) == none)
                #expect(fake.received.count == 3)
                // A fourth level of inputs pushes the oldest out (three are kept beside the latest).
                _ = try await today("medium")
                #expect(fake.received.count == 4)
                #expect(try await today("high") == high && fake.received.count == 4)
            }
        }
    }

    @Test func aGoodModelAnswerIsUsedAndKept() async throws {
        try await FakeLanguageModel.run(behaviour: .goodAnswer) { fake in
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: fake.configuration())) { client, app in
                let token = try await Self.cycleUser(client, verifiedIn: app.database)
                let answer = try await Self.today(client, token)
                #expect(answer["source"] as? String == "llm")
                #expect(answer["phaseGuidance"] as? String == "Be kind to yourself.")
                let reasons = (answer["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
                #expect(reasons == (1...3).map { "\(FakeLanguageModel.reasonPrefix) pick \($0)" })

                let sent = try #require(fake.received.first)
                #expect(sent.apiKey == FakeLanguageModel.apiKey)
                #expect(sent.version == "2023-06-01")
                #expect(sent.model == "claude-test")
                #expect(sent.maxTokens == 1024)
                #expect(sent.prompt.contains("- Current Phase: follicular (Day 10 of cycle)"))
                let candidates = FakeLanguageModel.candidateIDs(in: sent.prompt)
                #expect(candidates.count == RecommendationsFeature.modelCandidates)
                #expect(Self.ids(answer) == Array(candidates.suffix(3).reversed()))
                // Free user: no premium workout is even offered to the model.
                let listed = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for id in candidates { group.addTask { try json(try await client.json(.get, "/v1/workouts/\(id)"))["isPremium"] as? Bool ?? true } }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(!listed.contains(true))

                // Kept for the day: no second call; a refresh asks again.
                _ = try await Self.today(client, token)
                #expect(fake.received.count == 1)
                let refreshed = try json(try await client.json(.post, "/v1/recommendations/refresh", token: token))
                #expect(refreshed["source"] as? String == "llm")
                #expect(fake.received.count == 2)
                #expect(Set(FakeLanguageModel.candidateIDs(in: fake.received[1].prompt)).isDisjoint(with: Self.ids(answer)))
            }
        }
    }

    @Test(arguments: [
        FakeLanguageModel.Behaviour.unknownID, .malformedJSON, .slow(.seconds(3)), .error(status: 529, type: "overloaded_error"),
        .error(status: 500, type: "api_error"),
    ])
    func anyModelFailureFallsBackToTheRules(_ behaviour: FakeLanguageModel.Behaviour) async throws {
        try await FakeLanguageModel.run(behaviour: behaviour) { fake in
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: fake.configuration(timeout: .milliseconds(500)))) { client, app in
                let token = try await Self.cycleUser(client, verifiedIn: app.database)
                let answer = try await Self.today(client, token)
                #expect(fake.received.count == 1)
                #expect(answer["source"] as? String == "rules")
                #expect(Self.ids(answer).count == 3)
                #expect(!Self.ids(answer).contains("00000000-dead-4bee-8000-000000000000"))
                #expect((answer["phaseGuidance"] as? String)?.hasPrefix(CyclePhase.follicular.guidance) == true)
            }
        }
    }

    @Test func aWrongKeyFallsBackToTheRules() async throws {
        try await FakeLanguageModel.run { fake in
            var configuration = fake.configuration()
            configuration.apiKey = "sk-ant-wrong"
            try await withApp(.sqlite, options: .init(demoCatalog: true, languageModel: configuration)) { client, app in
                let token = try await Self.cycleUser(client, verifiedIn: app.database)
                #expect(try await Self.today(client, token)["source"] as? String == "rules")
                #expect(fake.received.first?.apiKey == "sk-ant-wrong")
            }
        }
    }

    @Test func theModelIsConfiguredFromTheEnvironment() throws {
        #expect(try ServerConfiguration.resolve(environment: [:]).languageModel == nil)
        let configured = try ServerConfiguration.resolve(environment: [
            "FITBASE_ANTHROPIC_API_KEY": "sk-ant-x", "FITBASE_ANTHROPIC_BASE_URL": "http://127.0.0.1:9999/", "FITBASE_ANTHROPIC_MODEL": "claude-haiku-4-5",
        ]).languageModel
        #expect(configured == LanguageModelConfiguration(apiKey: "sk-ant-x", baseURL: "http://127.0.0.1:9999", model: "claude-haiku-4-5"))
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_ANTHROPIC_API_KEY": "k"]).languageModel?.baseURL == "https://api.anthropic.com")
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(environment: ["FITBASE_ANTHROPIC_API_KEY": "k", "FITBASE_ANTHROPIC_BASE_URL": "ftp://x"])
        }
    }
}
