import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``ProfileService`` over a ``FakeAuthService``'s signed-in account. Deleting the account signs the
/// auth fake out with `.accountDeleted`.
public actor FakeProfileService: ProfileService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case profile, saveProfile, setShareWorkoutData, consents, recordConsent, exportData, changePassword, deleteAccount, sessions, endSession
        case auditLog
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeProfileService")
    private let auth: FakeAuthService
    private let clock: any KitClock
    private var profiles: [UserID: Profile] = [:]
    private var consentRecords: [UserID: [ConsentKind: ConsentRecord]] = [:]
    /// Each user's signed-in devices (this one and an iPad, until ended).
    private var sessionLists: [UserID: [SignedInSession]] = [:]
    /// Each user's audit log, oldest first (a fortnight of syncs and reads, and one refusal).
    private var auditLogs: [UserID: [AuditRecord]] = [:]

    /// A fake whose signed-in user starts with `profile` (Ana's filled-in profile by default).
    public init(auth: FakeAuthService, profile: Profile = FakeData.profile, clock: any KitClock = SystemKitClock()) {
        self.auth = auth
        self.clock = clock
        profiles[FakeData.user.id] = profile
    }

    private func signedIn() async throws(KitError) -> SignedInUser {
        guard let user = await auth.signedInUser() else { throw .notSignedIn }
        return user
    }

    /// The signed-in user's profile, read by the other fakes as the server's services read it (not an operation).
    var signedInProfile: Profile? {
        get async { await auth.signedInUser().map { profiles[$0.id] ?? Profile(displayName: $0.displayName) } }
    }

    public func profile() async throws(KitError) -> UserProfile {
        try await knobs.enter(.profile, clock: clock)
        let user = try await signedIn()
        return UserProfile(id: user.id, email: user.email, emailVerified: user.emailVerified, profile: profiles[user.id] ?? Profile(displayName: user.displayName))
    }

    public func saveProfile(_ profile: Profile) async throws(KitError) -> UserProfile {
        try await knobs.enter(.saveProfile, clock: clock)
        let user = try await signedIn()
        var fields: [String: String] = [:]
        if !Profile.cycleLengthRange.contains(profile.averageCycleLength) { fields["averageCycleLength"] = "must be between 21 and 45 days" }
        if !Profile.periodLengthRange.contains(profile.averagePeriodLength) { fields["averagePeriodLength"] = "must be between 2 and 10 days" }
        // As the server saves a name: trimmed, none when empty, refused past Core's maximum.
        var saved = profile
        do throws(InvalidFields) {
            saved.displayName = try profile.displayName.flatMap { name throws(InvalidFields) in try DisplayNameRule.checked(name) }
        } catch {
            for broken in error.errors { fields[broken.field] = broken.message }
        }
        guard fields.isEmpty else { throw KitError(.invalidInput, fieldErrors: fields, code: .validationFailed) }
        profiles[user.id] = saved
        await auth.rename(to: saved.displayName)
        return UserProfile(id: user.id, email: user.email, emailVerified: user.emailVerified, profile: saved)
    }

    public func setShareWorkoutData(_ share: Bool) async throws(KitError) -> UserProfile {
        try await knobs.enter(.setShareWorkoutData, clock: clock)
        let user = try await signedIn()
        var profile = profiles[user.id] ?? Profile(displayName: user.displayName)
        profile.shareWorkoutData = share
        profiles[user.id] = profile
        return UserProfile(id: user.id, email: user.email, emailVerified: user.emailVerified, profile: profile)
    }

    public func consents() async throws(KitError) -> [ConsentRecord] {
        try await knobs.enter(.consents, clock: clock)
        let user = try await signedIn()
        return ConsentKind.allCases.compactMap { consentRecords[user.id]?[$0] }
    }

    public func recordConsent(_ kind: ConsentKind, version: String, granted: Bool) async throws(KitError) -> ConsentRecord {
        try await knobs.enter(.recordConsent, clock: clock)
        let user = try await signedIn()
        guard !version.isEmpty, version.count <= 64 else {
            throw KitError(.invalidInput, fieldErrors: ["version": "must be 1 to 64 characters"], code: .validationFailed)
        }
        // As the server keeps them: the latest 50 answers of the kind, oldest first.
        let answer = ConsentRecord.Answer(version: version, granted: granted, recordedAt: clock.now)
        let history = ((consentRecords[user.id]?[kind]?.history ?? []) + [answer]).suffix(50)
        let record = ConsentRecord(kind: kind, version: version, granted: granted, recordedAt: clock.now, history: Array(history))
        consentRecords[user.id, default: [:]][kind] = record
        return record
    }

    public func exportData(into directory: URL) async throws(KitError) -> AccountExport {
        try await knobs.enter(.exportData, clock: clock)
        let user = try await signedIn()
        let profile = profiles[user.id] ?? Profile()
        let document: [String: Any] = [
            "userId": user.id.description, "exportedAt": InternetDateTime.string(from: clock.now),
            "sections": ["account": ["email": user.email ?? "", "displayName": profile.displayName ?? ""]],
        ]
        let json = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        let file = directory.appendingPathComponent(AccountExport.fileName(savedAt: clock.now))
        do {
            try json.write(to: file, options: .atomic)
        } catch {
            throw KitError(.storage)
        }
        return AccountExport(fileURL: file, bytes: Int64(json.count), savedAt: clock.now)
    }

    public func changePassword(current: String, new: String) async throws(KitError) {
        try await knobs.enter(.changePassword, clock: clock)
        let user = try await signedIn()
        guard await auth.checkPassword(current) else { throw KitError(.invalidCredentials, message: "Your current password is not right.") }
        if let broken = PasswordPolicy.violations(of: new, email: user.email.flatMap(EmailAddress.init)).first {
            throw KitError(.invalidInput, fieldErrors: ["newPassword": broken.message], code: .validationFailed)
        }
    }

    public func deleteAccount(_ reauthentication: Reauthentication) async throws(KitError) {
        try await knobs.enter(.deleteAccount, clock: clock)
        let user = try await signedIn()
        switch reauthentication {
        case .password(let password):
            guard await auth.checkPassword(password) else { throw KitError(.invalidCredentials, message: "That password is not right.") }
        case .apple(let credential):
            guard credential.identityToken == "fake:\(user.email ?? "")" else { throw KitError(.invalidCredentials) }
        case .google(let idToken, _):
            guard idToken == "fake:\(user.email ?? "")" else { throw KitError(.invalidCredentials) }
        }
        profiles[user.id] = nil
        consentRecords[user.id] = nil
        sessionLists[user.id] = nil
        await auth.deleteSignedInAccount()
    }

    public func sessions() async throws(KitError) -> [SignedInSession] {
        try await knobs.enter(.sessions, clock: clock)
        let user = try await signedIn()
        return sessionList(of: user.id)
    }

    public func endSession(id: SessionID) async throws(KitError) {
        try await knobs.enter(.endSession, clock: clock)
        let user = try await signedIn()
        var list = sessionList(of: user.id)
        guard let index = list.firstIndex(where: { $0.id == id }) else {
            throw KitError(.notFound, message: "That device is already signed out.", code: .notFound)
        }
        let ended = list.remove(at: index)
        sessionLists[user.id] = list
        // Ending this device's own session signs it out, as the server's next refusal would.
        if ended.isCurrent { await auth.signOut() }
    }

    public func auditLog(page: PageRequest) async throws(KitError) -> Page<AuditRecord> {
        try await knobs.enter(.auditLog, clock: clock)
        let user = try await signedIn()
        let log = auditLogs[user.id] ?? cannedAuditLog(of: user.id)
        auditLogs[user.id] = log
        let newestFirst = Array(log.reversed())
        let start = page.cursor.flatMap(Int.init) ?? 0
        guard start >= 0, start <= newestFirst.count else { throw KitError(.invalidInput, fieldErrors: ["cursor": "is not a cursor this list gave"]) }
        let end = min(newestFirst.count, start + max(1, page.limit))
        return Page(items: Array(newestFirst[start..<end]), nextCursor: end < newestFirst.count ? String(end) : nil)
    }

    private func sessionList(of user: UserID) -> [SignedInSession] {
        if let list = sessionLists[user] { return list }
        let list = [
            SignedInSession(
                id: SessionID(rawValue: FakeData.uuid(0x900)), deviceLabel: "iPhone", createdAt: clock.now.addingTimeInterval(-86_400), lastUsedAt: clock.now,
                isCurrent: true),
            SignedInSession(
                id: SessionID(rawValue: FakeData.uuid(0x901)), deviceLabel: "iPad", createdAt: clock.now.addingTimeInterval(-9 * 86_400),
                lastUsedAt: clock.now.addingTimeInterval(-2 * 86_400), isCurrent: false),
        ]
        sessionLists[user] = list
        return list
    }

    private func cannedAuditLog(of user: UserID) -> [AuditRecord] {
        var log: [AuditRecord] = []
        for day in 0..<14 {
            let at = clock.now.addingTimeInterval(Double(day - 14) * 86_400)
            log.append(AuditRecord(
                sequence: Int64(log.count + 1), at: at, actor: user, rawAction: AuditAction.sync.rawValue, rawResource: AuditResource.workoutLogs.rawValue, count: 1,
                outcome: .success))
            log.append(AuditRecord(
                sequence: Int64(log.count + 1), at: at.addingTimeInterval(60), actor: user, rawAction: AuditAction.read.rawValue,
                rawResource: AuditResource.healthSummary.rawValue, count: 7, outcome: .success))
        }
        log.append(AuditRecord(
            sequence: Int64(log.count + 1), at: clock.now, actor: user, rawAction: AuditAction.read.rawValue, rawResource: AuditResource.healthSamples.rawValue,
            count: 3, outcome: .denied))
        return log
    }
}
