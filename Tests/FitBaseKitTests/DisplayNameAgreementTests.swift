import FitBaseCore
import FitBaseKit
import Foundation
import Testing

/// A display name is saved by Core's one rule everywhere: the server and the profile fake keep the same name (trimmed,
/// none when blank) and refuse the same ones, and the forms refuse exactly those.
@Suite struct DisplayNameAgreementTests {
    static let names = [
        " Ana ", String(repeating: "a", count: 100) + "  ", "\t" + String(repeating: "é", count: 100), String(repeating: "b", count: 101), "   ",
    ]

    /// What saving `name` did: the name kept, or the field refused.
    enum Outcome: Equatable {
        case saved(String?)
        case refused(String?)
    }

    static func save(_ name: String, with profiles: any ProfileService) async throws -> Outcome {
        var profile = try await profiles.profile().profile
        profile.displayName = name
        do {
            return .saved(try await profiles.saveProfile(profile).profile.displayName)
        } catch {
            return .refused(error.fieldErrors["displayName"])
        }
    }

    @Test func theServerAndTheFakeKeepAndRefuseTheSameNames() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let fakes = FakeServices(scenario: .populated)
            for name in Self.names {
                let live = try await Self.save(name, with: device.dependencies.profile)
                let fake = try await Self.save(name, with: fakes.profile)
                #expect(live == fake, "\(name.debugDescription): server \(live), fake \(fake)")
                // The forms refuse a name before sending it exactly when the server would.
                let tooLong = DisplayNameRule.isTooLong(name)
                #expect(tooLong == (live == .refused(DisplayNameRule.message)), "\(name.debugDescription)")
            }
        }
    }
}
