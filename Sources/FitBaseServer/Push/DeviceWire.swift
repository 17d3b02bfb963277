import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of devices: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum DeviceWire {
    static func wire(_ device: DeviceRecord, current session: SessionID) -> Components.Schemas.Device {
        .init(
            token: device.token, platform: device.platform, environment: device.environment == .sandbox ? .sandbox : .production,
            bundleId: device.bundleID, locale: device.locale, timeZone: device.timeZone, appVersion: device.appVersion,
            createdAt: device.createdAt, registeredAt: device.registeredAt, current: device.session == session
        )
    }
}
