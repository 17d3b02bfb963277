import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation

extension Journey {
    /// The bundle id the phones register their push tokens with: the `apns-topic` the server sends to
    /// (`fitbase-fake-apns --topic app.fitbase.journey` in `.ci/run`).
    static let bundleID = "app.fitbase.journey"

    /// Ana's phone registers its push token, Cleo joins the group, and the server's `new_member` push reaches the
    /// gateway for Ana's token; tapping it opens the group in Ana's app.
    ///
    /// The gateway is `fitbase-fake-apns`, which the server was started against (`FITBASE_APNS_TEST_GATEWAY_URL`) and
    /// which writes what it accepts to the file named by `FITBASE_JOURNEY_APNS_RECORD`. Without that variable the
    /// server logs pushes instead of sending them, and this step checks the registration only.
    static func pushReachesTheGateway(_ ana: Phone, group: SocialGroup, server: URL) async throws {
        let token = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        try await ana.dependencies.push.registerDevice(token: token, environment: .sandbox)
        let registration = await ana.dependencies.push.registration()
        try check(registration?.userID != nil && registration?.token == token, "Ana's phone is registered for pushes (\(String(describing: registration)))")

        let cleo = try Phone(name: "Cleo", server: server)
        defer { try? FileManager.default.removeItem(at: cleo.directory) }
        _ = try await cleo.dependencies.auth.signUp(email: cleo.email, password: password, displayName: "Cleo")
        let invitation = try await ana.dependencies.groups.createInvitation(groupID: group.id)
        _ = try await cleo.dependencies.groups.join(code: invitation.code)
        await cleo.dependencies.auth.signOut()

        guard let record = ProcessInfo.processInfo.environment["FITBASE_JOURNEY_APNS_RECORD"], !record.isEmpty else {
            step("Ana's phone registered for pushes; Cleo joined (delivery not checked: no fake gateway, FITBASE_JOURNEY_APNS_RECORD unset)")
            return
        }
        let hex = token.map { String(format: "%02x", $0) }.joined()
        var payload: [String: Any]?
        try await until("the new_member push for Ana's phone reaches the gateway", timeout: .seconds(30)) {
            payload = acceptedPushes(in: record).first { push in
                push["deviceToken"] as? String == hex && ((push["payload"] as? [String: Any])?["fitbase"] as? [String: Any])?["type"] as? String == "new_member"
            }?["payload"] as? [String: Any]
            return payload != nil
        }
        let userInfo = try require(payload, "the push's payload")
        try check(await ana.app.openNotification(userInfo: userInfo), "Ana's app takes the push")
        try check(ana.app.destination == .group(group.id), "tapping the push opens the group (\(String(describing: ana.app.destination)))")
        ana.app.dismissDestination()
        step("Ana's phone registered; Cleo joined and the new_member push reached the gateway; tapping it opens \(group.name)")
    }

    /// The pushes `fitbase-fake-apns --record` wrote so far.
    private static func acceptedPushes(in path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] }
    }
}
