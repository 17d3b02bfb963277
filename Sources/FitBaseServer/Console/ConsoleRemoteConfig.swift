import FitBaseCore
import Foundation
import Hummingbird

/// The Config page: every remote config flag with its rollout, conditions and testers; a form to create or change a
/// flag, one per flag to move its rollout, one to set a tester's value, and deleting a flag — each change through
/// ``RemoteConfigAdministration`` (one transaction with its audit entry and the bump every instance sees).
extension ConsoleFeature {
    /// The form's fields, as ``ConfigFlagChange`` names them.
    static let configFields = ["key", "kind", "value", "defaultValue", "rolloutPercent", "tiers", "appVersions", "platforms", "locales", "summary"]

    func remoteConfigPage(_ request: Request, _ admin: ConsoleAdmin) async throws -> Response {
        var filled: [String: String] = [:]
        if let key = request.uri.queryParameters.get("edit"), let flag = try await remoteConfig.store.flag(key) {
            filled = Self.formValues(flag)
        }
        var notice: String?
        if let saved = request.uri.queryParameters.get("saved") { notice = "Saved \(saved)." }
        if let deleted = request.uri.queryParameters.get("deleted") { notice = "Deleted \(deleted)." }
        return try await remoteConfigPage(admin, filled: filled, errors: [], notice: notice)
    }

    func remoteConfigPage(
        _ admin: ConsoleAdmin, filled: [String: String], errors: [FieldError], notice: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let flags = try await administration.list()
        var emails: [UserID: String] = [:]
        for editor in Set(flags.compactMap(\.changedBy)) { emails[editor] = try await accounts.users.find(id: editor)?.email }
        let rows = flags.map { entry -> [String: Any] in
            let flag = entry.flag
            let conditions = flag.conditions
            var parts: [String] = []
            if !conditions.tiers.isEmpty { parts.append("tiers " + conditions.tiers.map(\.rawValue).sorted().joined(separator: ", ")) }
            if let range = conditions.appVersions { parts.append("app \(range)") }
            if !conditions.platforms.isEmpty { parts.append(conditions.platforms.map(\.rawValue).sorted().joined(separator: ", ")) }
            if !conditions.locales.isEmpty { parts.append("locales " + conditions.locales.joined(separator: ", ")) }
            return [
                "key": flag.key, "kind": flag.kind.rawValue, "value": flag.value.description, "defaultValue": flag.defaultValue.description,
                "rollout": RemoteConfigAdministration.percent(flag.rolloutPercent), "rolloutValue": Self.percentText(flag.rolloutPercent),
                "conditions": parts.isEmpty ? "everyone" : parts.joined(separator: "; "), "testers": flag.overrides.count, "summary": flag.summary,
                // Bools, not text: swift-mustache takes an empty string for true.
                "hasSummary": !flag.summary.isEmpty, "isPublic": flag.isPublic,
                "changed": consoleTime(entry.changedAt), "changedBy": entry.changedBy.map { emails[$0] ?? $0.description } ?? "—",
            ]
        }
        var fieldErrors: [String: Any] = [:]
        for field in Self.configFields + ["email"] {
            let messages = errors.filter { $0.field == field || $0.field.hasPrefix(field + ".") }.map(\.message)
            fieldErrors[field] = ["invalid": !messages.isEmpty, "errors": messages]
        }
        var values: [String: Any] = [
            "flags": rows, "form": filled, "f": fieldErrors, "hasErrors": !errors.isEmpty,
            "errorList": errors.filter { !(Self.configFields + ["email"]).contains($0.field) }.map { "\($0.field) \($0.message)" },
            "kinds": ConfigValueKind.allCases.map { ["value": $0.rawValue, "selected": filled["kind"] == $0.rawValue] },
            "publicChecked": filled["isPublic"] == "1",
        ]
        if let notice { values["notice"] = notice }
        return try renderer.page("config", title: "Remote config", section: "/console/config", admin: admin, status: status, values)
    }

    func saveFlag(_ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let key = form.text("key") ?? ""
        let change = ConfigFlagChange(
            kind: form.text("kind"), value: form["value"], defaultValue: form["defaultValue"].flatMap { $0.isEmpty ? nil : $0 },
            rolloutPercent: form.text("rolloutPercent"), tiers: form["tiers"], appVersions: form["appVersions"], platforms: form["platforms"],
            locales: form["locales"], summary: form["summary"], isPublic: form["isPublic"] != nil
        )
        do {
            try await administration.set(key, change, by: ConfigEditor(user: admin.user, email: admin.email))
        } catch let invalid as InvalidFields {
            var filled: [String: String] = [:]
            for field in Self.configFields { filled[field] = form[field] ?? "" }
            filled["isPublic"] = form["isPublic"] != nil ? "1" : ""
            return try await remoteConfigPage(admin, filled: filled, errors: invalid.errors, status: .unprocessableContent)
        }
        return ConsoleRenderer.redirect("/console/config?saved=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
    }

    func changeRollout(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let key = try Self.flagKey(context)
        do {
            try await administration.rollout(key, percent: form.text("rolloutPercent") ?? "", by: ConfigEditor(user: admin.user, email: admin.email))
        } catch let invalid as InvalidFields {
            return try await remoteConfigPage(admin, filled: [:], errors: invalid.errors, status: .unprocessableContent)
        } catch is AdministrationError {
            throw Problem.notFound("No flag \(key).")
        }
        return ConsoleRenderer.redirect("/console/config?saved=\(key)")
    }

    func setTester(_ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let key = form.text("key") ?? ""
        do {
            try await administration.override(
                key, email: form.text("email") ?? "", value: form["remove"] == nil ? form["value"] ?? "" : nil,
                by: ConfigEditor(user: admin.user, email: admin.email))
        } catch let invalid as InvalidFields {
            return try await remoteConfigPage(admin, filled: [:], errors: invalid.errors, status: .unprocessableContent)
        } catch is AdministrationError {
            return try await remoteConfigPage(admin, filled: [:], errors: [FieldError(field: "key", message: "names no flag")], status: .unprocessableContent)
        }
        return ConsoleRenderer.redirect("/console/config?saved=\(key)")
    }

    func deleteFlag(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let key = try Self.flagKey(context)
        do {
            try await administration.delete(key, by: ConfigEditor(user: admin.user, email: admin.email))
        } catch is AdministrationError {
            throw Problem.notFound("No flag \(key).")
        }
        return ConsoleRenderer.redirect("/console/config?deleted=\(key)")
    }

    var administration: RemoteConfigAdministration { RemoteConfigAdministration(database: database, clock: clock) }

    static func flagKey(_ context: FitBaseRequestContext) throws -> String {
        guard let key = context.parameters.get("key"), RemoteConfigRules.isKey(key) else { throw Problem.notFound("No such flag.") }
        return key
    }

    /// `10` or `12.5`: a percentage as the form takes it.
    static func percentText(_ percent: Double) -> String {
        percent.rounded() == percent ? String(Int(percent)) : String(percent)
    }

    /// The form filled with `flag` as it is.
    static func formValues(_ flag: ConfigFlag) -> [String: String] {
        [
            "key": flag.key, "kind": flag.kind.rawValue, "value": flag.value.description, "defaultValue": flag.defaultValue.description,
            "rolloutPercent": percentText(flag.rolloutPercent), "tiers": flag.conditions.tiers.map(\.rawValue).sorted().joined(separator: ","),
            "appVersions": flag.conditions.appVersions?.description ?? "", "platforms": flag.conditions.platforms.map(\.rawValue).sorted().joined(separator: ","),
            "locales": flag.conditions.locales.joined(separator: ","), "summary": flag.summary, "isPublic": flag.isPublic ? "1" : "",
        ]
    }
}
