import FitBaseKit
import Foundation

extension Journey {
    /// Each user action of the journey, as the number of times its event must be tracked on each phone (events not
    /// named here are printed, not checked).
    static func expectedAnalytics(for phone: Phone) -> [String: Int] {
        switch phone.name {
        case "Ana":
            [
                "sign_up": 1, "onboarding_completed": 1, "period_logged": 1, "recommendation_opened": 0, "workout_started": 2,
                "workout_completed": 2, "workout_synced": 2, "group_created": 1, "invite_shared": 1, "plan_saved": 1, "paywall_shown": 1,
                "purchase_started": 0, "account_deleted": 1, "sign_in": 0, "sign_out": 0,
            ]
        default:
            [
                "deep_link_opened": 1, "sign_up": 1, "onboarding_completed": 1, "group_joined": 1, "workout_started": 1,
                "workout_completed": 1, "workout_synced": 1, "sign_in": 0, "sign_out": 0,
            ]
        }
    }

    /// Prints the events every phone tracked with their counts (one line, `analytics: {...}`), and fails when an
    /// action's event was counted other than once per action (twice: a screen and a service both tracked it).
    static func checkAnalytics(_ phones: [Phone]) async throws {
        func counts(_ phone: Phone) -> [String: Int] {
            phone.analytics.events.reduce(into: [:]) { counts, event in counts[event.name, default: 0] += 1 }
        }
        // `workout_synced` arrives once the server has the log: give the last one a moment.
        try? await until("every phone's events arrive") {
            phones.allSatisfy { phone in expectedAnalytics(for: phone).allSatisfy { counts(phone)[$0.key, default: 0] >= $0.value } }
        }
        let seen = Dictionary(uniqueKeysWithValues: phones.map { ($0.name.lowercased(), counts($0)) })
        let json = try JSONSerialization.data(withJSONObject: seen, options: [.sortedKeys])
        print("analytics: \(String(decoding: json, as: UTF8.self))")
        for phone in phones {
            let actual = counts(phone)
            let wrong = expectedAnalytics(for: phone).filter { actual[$0.key, default: 0] != $0.value }
            try check(wrong.isEmpty, "\(phone.name)'s analytics: " + wrong.keys.sorted().map { "\($0) counted \(actual[$0, default: 0]) times for \(wrong[$0]!) actions" }.joined(separator: ", "))
        }
        step("each action was counted once (\(phones.map { "\($0.name) \($0.analytics.events.count) events" }.joined(separator: ", ")))")
    }
}
