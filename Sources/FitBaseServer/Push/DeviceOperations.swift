import FitBaseAPI
import FitBaseCore
import Foundation

/// `/v1/me/devices`: the caller's devices registered for push notifications. Every operation acts on the caller's own
/// devices; another account's token is never shown and cannot be deleted (it can be taken over by registering it:
/// the phone it names is now signed in here).
protocol DeviceOperations: FeatureOperations { var pushFeature: PushFeature { get } }

extension DeviceOperations {
    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let (token, registration) = try Self.checked(token: input.path.deviceToken, body)
        let now = clock.now
        let (device, created) = try await pushFeature.store.register(token, registration, user: caller.user, session: caller.session, now: now)
        let wire = DeviceWire.wire(device, current: caller.session)
        return created ? .created(.init(body: .json(wire))) : .ok(.init(body: .json(wire)))
    }

    func deleteDevice(_ input: Operations.DeleteDevice.Input) async throws -> Operations.DeleteDevice.Output {
        let caller = try RequestScope.requireCaller()
        guard let token = Self.normalized(input.path.deviceToken), try await pushFeature.store.unregister(token, of: caller.user) else {
            throw Problem.notFound("You have no device with this token.")
        }
        return .noContent(.init())
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let caller = try RequestScope.requireCaller()
        let limit = min(max(input.query.limit ?? 20, 1), 100)
        var offset = 0
        if let cursor = input.query.cursor {
            guard let value = Int(cursor), value >= 0 else {
                throw Problem.invalidRequest("cursor is not one this endpoint gave.", fieldErrors: [.init(field: "cursor", message: "is not one this endpoint gave")])
            }
            offset = value
        }
        let devices = try await pushFeature.store.devices(of: caller.user)
        let page = devices.dropFirst(offset).prefix(limit)
        let next = offset + page.count < devices.count ? String(offset + page.count) : nil
        return .ok(.init(body: .json(.init(items: page.map { DeviceWire.wire($0, current: caller.session) }, nextCursor: next))))
    }

    /// An APNs token as hex: even length, 64–200 characters, either case; lower-cased.
    static func normalized(_ token: String) -> String? {
        guard (64...200).contains(token.utf8.count), token.utf8.count % 2 == 0, token.utf8.allSatisfy({ $0.isHexDigit }) else { return nil }
        return token.lowercased()
    }

    /// The token and body checked, every invalid field named.
    static func checked(token: String, _ body: Components.Schemas.DeviceRegistration) throws(Problem) -> (String, DeviceRegistration) {
        var errors: [Problem.FieldError] = []
        let normalized = normalized(token)
        if normalized == nil {
            errors.append(.init(field: "deviceToken", message: "must be the APNs token as hex: an even number of 64–200 hex digits"))
        }
        if body.platform != "ios" { errors.append(.init(field: "platform", message: "must be ios")) }
        let environment = PushEnvironment(rawValue: body.environment)
        if environment == nil { errors.append(.init(field: "environment", message: "must be sandbox or production")) }
        let bundleID = body.bundleId
        if bundleID.isEmpty || bundleID.utf8.count > 155 || !bundleID.utf8.allSatisfy(Self.isBundleCharacter) {
            errors.append(.init(field: "bundleId", message: "must be an app's bundle identifier (letters, digits, dots and hyphens, at most 155)"))
        }
        if let locale = body.locale, locale.isEmpty || locale.utf8.count > 35 || !locale.utf8.allSatisfy({ Self.isBundleCharacter($0) || $0 == UInt8(ascii: "_") }) {
            errors.append(.init(field: "locale", message: "must be a language tag such as pt-PT"))
        }
        if let zone = body.timeZone, !LocalCalendar.isAcceptedZoneName(zone) {
            errors.append(.init(field: "timeZone", message: "must be an IANA time zone such as Europe/Lisbon"))
        }
        if let version = body.appVersion, version.isEmpty || version.count > 64 {
            errors.append(.init(field: "appVersion", message: "must be 1–64 characters"))
        }
        if let install = body.installId, install.count < 16 || install.count > 128 {
            errors.append(.init(field: "installId", message: "must be 16–128 characters"))
        }
        guard errors.isEmpty, let normalized, let environment else { throw .validationFailed(errors) }
        return (
            normalized,
            DeviceRegistration(
                platform: body.platform, environment: environment, bundleID: bundleID, locale: body.locale, timeZone: body.timeZone,
                appVersion: body.appVersion, installID: body.installId
            )
        )
    }

    private static func isBundleCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
