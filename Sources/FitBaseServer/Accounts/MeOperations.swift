import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime

/// The signed-in user's own account: profile, consents, sessions, export and deletion. Every operation acts on the
/// caller only; there is no way to name another user here.
protocol MeOperations: FeatureOperations { var accountsFeature: AccountsFeature { get } }

extension MeOperations {
    private var database: Database { accountsFeature.database }
    private var registry: AccountDataRegistry { accountsFeature.registry }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let caller = try RequestScope.requireCaller()
        return .ok(.init(body: .json(try await wireUser(caller.user))))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let update) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        _ = try await accountsFeature.profiles.apply(update, of: caller.user, now: clock.now)
        return .ok(.init(body: .json(try await wireUser(caller.user))))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let caller = try RequestScope.requireCaller()
        guard clock.now.timeIntervalSince(caller.authenticatedAt) <= AccountsFeature.reauthenticationWindow else {
            throw Problem.unauthenticated(
                .reauthenticationRequired, "Deleting the account needs a sign-in from the last 5 minutes; sign in again first."
            )
        }
        try await registry.deleteAccount(caller.user, now: clock.now, database: database)
        accountsFeature.logger.notice("account deleted", metadata: ["user": "\(caller.user)"])
        return .noContent(.init())
    }

    /// The generated handler's answer (kept for when direct routes are off): the document ``exportRoutes`` streams, held
    /// whole in memory.
    func exportMe(_ input: Operations.ExportMe.Input) async throws -> Operations.ExportMe.Output {
        let caller = try RequestScope.requireCaller()
        var collected = Data()
        try await registry.writeExport(caller.user, exportedAt: clock.now, database: database) { collected.append(contentsOf: $0.readableBytesView) }
        let document = try exportDecoder.decode(Components.Schemas.AccountExport.self, from: collected)
        // A bare `attachment`: the generated server percent-encodes header values, which would garble `; filename=`.
        return .ok(.init(headers: .init(contentDisposition: "attachment"), body: .json(document)))
    }

    /// `GET /v1/me/export` answered without the generated server: the document is written to the connection as it is
    /// read, one page of a section at a time, so the server's memory does not grow with the account.
    var exportRoutes: [DirectRoute] {
        [
            DirectRoute(method: .get, path: "/v1/me/export") { request, _ in
                guard DirectRoute.acceptsJSON(request) else { return nil }
                let caller = try RequestScope.requireCaller()
                let (registry, database) = (self.registry, self.database)
                // The body is written after this handler returns: it runs in the request's scope again (the audit
                // entries of the export name the request).
                let scope = RequestScope.current
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8", .contentDisposition: "attachment"],
                    body: ResponseBody { writer in
                        try await RequestScope.$current.withValue(scope) {
                            try await registry.writeExport(caller.user, exportedAt: clock.now, database: database) { try await writer.write($0) }
                        }
                        try await writer.finish(nil)
                    }
                )
            }
        ]
    }

    func listConsents(_ input: Operations.ListConsents.Input) async throws -> Operations.ListConsents.Output {
        let caller = try RequestScope.requireCaller()
        let history = try await accountsFeature.consents.history(of: caller.user, latest: ConsentStore.listedHistory)
        let items = ConsentKind.allCases.compactMap { kind in Self.wire(kind, history: history) }
        return .ok(.init(body: .json(.init(items: items))))
    }

    func recordConsent(_ input: Operations.RecordConsent.Input) async throws -> Operations.RecordConsent.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let version = body.version.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !version.isEmpty, version.count <= 64 else {
            throw Problem.validationFailed([.init(field: "version", message: "must be 1–64 characters")])
        }
        let kind = body.kind
        try await accountsFeature.consents.record(kind, version: version, granted: body.granted, for: caller.user, now: clock.now)
        let history = try await accountsFeature.consents.history(of: caller.user, latest: ConsentStore.listedHistory)
        guard let consent = Self.wire(kind, history: history) else { throw Problem.internalError }
        return .created(.init(body: .json(consent)))
    }

    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let cursor = try input.query.cursor.map(SessionCursor.init(encoded:))
        let page = try await accountsFeature.sessions.list(user: caller.user, limit: limit + 1, after: cursor.map { ($0.createdAt, $0.id) })
        let items = page.prefix(limit).map { session in
            Components.Schemas.SessionInfo(
                id: session.id.description, deviceLabel: session.deviceLabel, createdAt: session.createdAt,
                lastUsedAt: session.lastUsedAt, current: session.id == caller.session
            )
        }
        let next = page.count > limit ? page.prefix(limit).last.map { SessionCursor(createdAt: $0.createdAt, id: $0.id).encoded } : nil
        return .ok(.init(body: .json(.init(items: Array(items), nextCursor: next))))
    }

    func deleteSession(_ input: Operations.DeleteSession.Input) async throws -> Operations.DeleteSession.Output {
        let caller = try RequestScope.requireCaller()
        guard let session = SessionID(input.path.sessionId),
            try await accountsFeature.sessions.revoke(session, of: caller.user, now: clock.now)
        else {
            throw Problem.notFound("No live session \(input.path.sessionId) belongs to you.")
        }
        return .noContent(.init())
    }

    // MARK: Helpers

    private func wireUser(_ id: UserID) async throws -> Components.Schemas.User {
        guard let user = try await accountsFeature.users.find(id: id) else {
            throw Problem.unauthenticated(.sessionRevoked, "The account no longer exists.")
        }
        return try await accountsFeature.responses.user(user)
    }

    private static func wire(_ kind: ConsentKind, history: [ConsentEvent]) -> Components.Schemas.Consent? {
        let events = history.filter { $0.kind == kind }
        guard let latest = events.last else { return nil }
        return .init(
            kind: kind, version: latest.version, granted: latest.granted, recordedAt: latest.recordedAt,
            history: events.map { .init(version: $0.version, granted: $0.granted, recordedAt: $0.recordedAt) }
        )
    }
}
/// Position in the session list: the last item's creation time and id.
private struct SessionCursor {
    let createdAt: Date
    let id: SessionID

    init(createdAt: Date, id: SessionID) {
        self.createdAt = createdAt
        self.id = id
    }

    init(encoded: String) throws(Problem) {
        let parts = PageRequest.decodeCursor(encoded)?.split(separator: "|")
        guard let parts, parts.count == 2, let seconds = Double(parts[0]), let id = SessionID(String(parts[1])) else {
            throw Problem.invalidRequest("cursor is not a cursor this list returned.", fieldErrors: [.init(field: "cursor", message: "is not valid")])
        }
        self.createdAt = Date(timeIntervalSince1970: seconds)
        self.id = id
    }

    var encoded: String { PageRequest.encodeCursor("\(createdAt.timeIntervalSince1970)|\(id)") }
}

/// Reads the export's stored records back (instants in RFC 3339).
private let exportDecoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
        try InternetDateTimeTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
    }
    return decoder
}()
