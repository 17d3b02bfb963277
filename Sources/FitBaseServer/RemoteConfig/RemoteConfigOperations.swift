import FitBaseAPI
import FitBaseCore
import Foundation

/// `GET /v1/config`: every flag's value for the caller. The app states its version, platform and locale in the query
/// (`?appVersion=1.4.2&platform=ios&locale=de-AT`), so the answer is a function of the URL and the caller's token, which
/// is what its `ETag` (``ConditionalGetMiddleware``, `Vary: Authorization`) is keyed on.
protocol RemoteConfigOperations: FeatureOperations {
    var remoteConfigFeature: RemoteConfigFeature { get }
}

extension RemoteConfigOperations {
    func getRemoteConfig(_ input: Operations.GetRemoteConfig.Input) async throws -> Operations.GetRemoteConfig.Output {
        // A token that was presented but refused (expired, revoked) is a 401, not an anonymous caller: the app refreshes
        // its session and asks again instead of keeping the defaults as the user's values.
        if RequestScope.current.caller == nil, let refused = RequestScope.current.authenticationFailure { throw refused }
        var errors: [FieldError] = []
        var context = ConfigContext(user: RequestScope.current.caller?.user)
        if let text = input.query.appVersion {
            context.appVersion = SemanticVersion(text)
            if context.appVersion == nil { errors.append(FieldError(field: "appVersion", message: "must be a version like 1.4.2")) }
        }
        if let text = input.query.platform {
            context.platform = ConfigPlatform(rawValue: text)
            if context.platform == nil {
                errors.append(FieldError(field: "platform", message: "must be one of \(ConfigPlatform.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        if let text = input.query.locale {
            if ConfigConditions.isLocale(text) { context.locale = text } else { errors.append(FieldError(field: "locale", message: "must be a language tag like de-AT")) }
        }
        guard errors.isEmpty else { throw InvalidFields(errors) }
        let feature = remoteConfigFeature
        let flags = try await feature.store.flags()
        if let user = context.user, flags.contains(where: { !$0.conditions.tiers.isEmpty }) {
            context.tier = try await feature.entitlements.entitlement(of: user, at: clock.now).tier
        }
        let values = RemoteConfigRules.resolve(flags, for: context).mapValues(RemoteConfigWire.json)
        return .ok(.init(body: .json(.init(values: RecordJSON(fields: values)))))
    }
}

/// Remote config values ↔ JSON.
enum RemoteConfigWire {
    static func json(_ value: ConfigValue) -> JSONValue {
        switch value {
        case .bool(let flag): .bool(flag)
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
        case .string(let text): .string(text)
        case .json(let text): JSONValue.parse(Data(text.utf8)) ?? .null
        }
    }
}
