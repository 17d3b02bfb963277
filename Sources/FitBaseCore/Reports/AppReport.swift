import Foundation

/// What an app reports about itself: an error it met, a crash, or how long an operation took. Never who the user is,
/// what they entered, or any health or cycle value: every field is a closed vocabulary, a number, or a strict pattern
/// that leaves no room for free text (``AppReportRules``).
public struct AppReport: Sendable, Equatable {
    /// The kind of a report.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case error, crash, trace
    }

    /// One frame of a crash's stack, symbolicated on the device: `FitBaseKit` + `$s10FitBaseKit…` + `0x1a4`.
    public struct Frame: Sendable, Equatable {
        public var module: String
        public var symbol: String
        public var offset: Int

        /// A frame.
        public init(module: String, symbol: String, offset: Int) {
            self.module = module
            self.symbol = symbol
            self.offset = offset
        }

        /// `module symbol+offset`, how the console groups crashes.
        public var description: String { "\(module) \(symbol)+\(offset)" }
    }

    /// The client's id of the report: sending it again stores it once.
    public var id: UUID
    public var kind: Kind
    public var occurredAt: Date
    /// `1.4.2`.
    public var appVersion: String
    public var platform: ConfigPlatform
    /// `17.4.1`.
    public var osVersion: String?
    /// The hardware model identifier (`iPhone15,2`, `arm64`), never the user's device name.
    public var deviceModel: String
    /// An error's code: a ``ProblemCode`` (`validation_failed`) or a kind of the Kit's errors (`offline`).
    public var code: String?
    /// Where an error happened: a screen or operation name (`leaderboard`, `sync.push`).
    public var location: String?
    /// A crash's exception or signal (`EXC_BAD_ACCESS`, `SIGABRT`).
    public var exceptionType: String?
    /// A crash's frames, innermost first.
    public var frames: [Frame]
    /// A trace's operation (`leaderboard.fetch`).
    public var operation: String?
    /// A trace's duration in milliseconds.
    public var durationMilliseconds: Int?

    /// A report; the fields its kind needs are checked by ``AppReportRules``.
    public init(
        id: UUID, kind: Kind, occurredAt: Date, appVersion: String, platform: ConfigPlatform, osVersion: String? = nil, deviceModel: String,
        code: String? = nil, location: String? = nil, exceptionType: String? = nil, frames: [Frame] = [], operation: String? = nil,
        durationMilliseconds: Int? = nil
    ) {
        self.id = id
        self.kind = kind
        self.occurredAt = occurredAt
        self.appVersion = appVersion
        self.platform = platform
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.code = code
        self.location = location
        self.exceptionType = exceptionType
        self.frames = frames
        self.operation = operation
        self.durationMilliseconds = durationMilliseconds
    }

    /// An error report.
    public static func error(
        id: UUID = UUID(), code: String, location: String, at date: Date, appVersion: String, platform: ConfigPlatform, osVersion: String? = nil,
        deviceModel: String
    ) -> AppReport {
        AppReport(id: id, kind: .error, occurredAt: date, appVersion: appVersion, platform: platform, osVersion: osVersion, deviceModel: deviceModel, code: code, location: location)
    }

    /// A trace report.
    public static func trace(
        id: UUID = UUID(), operation: String, milliseconds: Int, at date: Date, appVersion: String, platform: ConfigPlatform, osVersion: String? = nil,
        deviceModel: String
    ) -> AppReport {
        AppReport(
            id: id, kind: .trace, occurredAt: date, appVersion: appVersion, platform: platform, osVersion: osVersion, deviceModel: deviceModel,
            operation: operation, durationMilliseconds: milliseconds)
    }
}
