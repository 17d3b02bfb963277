import FitBaseCore
import Foundation
import Testing

/// What an app report may carry: codes, names, versions, models and frames of strict shapes; never free text.
@Suite struct AppReportRulesTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func error(code: String = "offline", location: String = "leaderboard") -> AppReport {
        .error(code: code, location: location, at: now, appVersion: "1.4.2", platform: .ios, osVersion: "17.4.1", deviceModel: "iPhone15,2")
    }

    @Test func wellFormedReportsPass() {
        let crash = AppReport(
            id: UUID(), kind: .crash, occurredAt: now, appVersion: "1.4", platform: .ios, deviceModel: "arm64", exceptionType: "SIGABRT",
            frames: [.init(module: "FitBaseKit", symbol: "$s10FitBaseKit16LeaderboardModelC4loadyyYaF", offset: 420), .init(module: "libswiftCore.dylib", symbol: "swift_retain", offset: 0)])
        let trace = AppReport.trace(operation: "leaderboard.fetch", milliseconds: 1_840, at: now, appVersion: "1.4.2", platform: .android, deviceModel: "x86_64")
        #expect(AppReportRules.violations(of: [error(), error(code: "validation_failed", location: "plans.save"), crash, trace], now: now).isEmpty)
    }

    @Test func freeTextIsRefusedWherever() {
        #expect(AppReportRules.violations(of: [error(code: "Ana could not sync")], now: now).map(\.field) == ["reports[0].code"])
        #expect(AppReportRules.violations(of: [error(location: "ana@example.com")], now: now).map(\.field) == ["reports[0].location"])
        #expect(AppReportRules.violations(of: [error(location: "Morning crew")], now: now).map(\.field) == ["reports[0].location"])
        var report = error()
        report.deviceModel = "Ana's iPhone"
        report.osVersion = "17 (beta)"
        report.frames = [.init(module: "App", symbol: "main", offset: 1)]
        #expect(AppReportRules.violations(of: [report], now: now).map(\.field) == ["reports[0].osVersion", "reports[0].deviceModel", "reports[0].frames"])
        let crash = AppReport(
            id: UUID(), kind: .crash, occurredAt: now, appVersion: "1.4.2", platform: .ios, deviceModel: "iPhone15,2", exceptionType: "User tapped save",
            frames: [.init(module: "App", symbol: "save(note: \"feeling sick\")", offset: 1)])
        #expect(AppReportRules.violations(of: [crash], now: now).map(\.field) == ["reports[0].exceptionType", "reports[0].frames[0].symbol"])
    }

    @Test func contactDetailsSpelledInIdentifierCharactersAreRefused() {
        let contacts = [
            "call-support-at-evil-example-com", "evil.example.com", "www-evil-shop", "mail_me.at.ana.example.org", "https-x-y", "x.io",
            "tel-555-123-4567", "call.5551234567", "mail me at a@b.co", "https://x.y", "+1 555 123 4567",
        ]
        for text in contacts {
            #expect(AppReportRules.looksLikeContactDetails(text), "\(text)")
            #expect(!AppReportRules.isIdentifier(text) && !AppReportRules.isSymbol(text), "\(text)")
            let field = AppReportRules.violations(of: [error(location: text)], now: now)
            #expect(field.map(\.field) == ["reports[0].location"], "\(text)")
            #expect(field.first?.message == "must not look like an e-mail address, a link or a phone number", "\(text)")
        }
        #expect(AppReportRules.looksLikeContactDetails("$s12callsupport4evil7example3com"))
        for name in [
            "leaderboard.fetch", "sync.at-launch", "workout.info", "FitBaseKit", "libswiftCore.dylib", "plans.v2.step3", "com.fitbase.sync",
            "$s10FitBaseKit16LeaderboardModelC4loadyyYaF", "swift_task_switch",
        ] {
            #expect(!AppReportRules.looksLikeContactDetails(name), "\(name)")
        }
        let trace = AppReport.trace(operation: "call-support-at-evil-example-com", milliseconds: 5, at: now, appVersion: "1.4.2", platform: .ios, deviceModel: "arm64")
        #expect(AppReportRules.violations(of: [trace], now: now).map(\.field) == ["reports[0].operation"])
    }

    @Test func theKitsErrorKindsAndProblemCodesAreTheCodes() {
        for code in AppReportRules.kitErrorKinds.sorted() + ProblemCode.allCases.map(\.rawValue) {
            #expect(AppReportRules.violations(of: [error(code: code)], now: now).isEmpty, "\(code)")
        }
    }

    @Test func shapesAndBounds() {
        for model in ["iPhone15,2", "iPad13,1", "arm64", "x86_64", "Pixel8"] { #expect(AppReportRules.isDeviceModel(model), "\(model)") }
        for model in ["", "i", "iPhone15,", "iPhone 15", "15,2", "iPhone15,2,1", "iPhone15,1234", String(repeating: "a", count: 21)] {
            #expect(!AppReportRules.isDeviceModel(model), "\(model)")
        }
        let slow = AppReport.trace(operation: "sync.round", milliseconds: 600_001, at: now, appVersion: "1.0", platform: .ios, deviceModel: "arm64")
        #expect(AppReportRules.violations(of: [slow], now: now).map(\.field) == ["reports[0].durationMilliseconds"])
        let late = AppReport.trace(operation: "sync.round", milliseconds: 1, at: now.addingTimeInterval(-31 * 86_400), appVersion: "1.0", platform: .ios, deviceModel: "arm64")
        #expect(AppReportRules.violations(of: [late], now: now).map(\.field) == ["reports[0].occurredAt"])
        let report = error()
        #expect(AppReportRules.violations(of: [report, report], now: now).map(\.field) == ["reports[1].id"])
        #expect(AppReportRules.violations(of: Array(repeating: error(), count: 51), now: now).map(\.field) == ["reports"])
        #expect(AppReportRules.violations(of: [], now: now).map(\.field) == ["reports"])
    }
}
