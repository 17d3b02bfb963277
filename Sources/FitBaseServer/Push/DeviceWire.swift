import FitBaseAPI
import FitBaseCore
import Foundation

/// How devices cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum DeviceWire {
    static func wire(_ device: DeviceRecord, current session: SessionID) -> Components.Schemas.Device {
        .init(
            token: device.token, platform: device.platform, environment: device.environment == .sandbox ? .sandbox : .production,
            bundleId: device.bundleID, locale: device.locale, timeZone: device.timeZone, appVersion: device.appVersion,
            createdAt: device.createdAt, registeredAt: device.registeredAt, current: device.session == session
        )
    }
}
