// Shim of the part of Apple's MetricKit FitBase's adapter calls (diagnostic payloads and their crash call stacks),
// written from Apple's documentation: same names, labels and optionality as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_MetricKitShim` delivers payloads for AppleAdapterTests; adapters never name it.
import Foundation
import Synchronization

/// The shared object that registers you to receive metrics, creates logs for custom metrics, and gives access to past
/// reports.
public final class MXMetricManager: NSObject, @unchecked Sendable {
    private let subscribers = Mutex<[ObjectIdentifier: Subscriber]>([:])

    /// The shared metric manager object.
    public class var shared: MXMetricManager { manager }
    private static let manager = MXMetricManager()

    /// Registers a subscriber to receive metrics and diagnostics.
    public func add(_ subscriber: any MXMetricManagerSubscriber) {
        subscribers.withLock { $0[ObjectIdentifier(subscriber)] = Subscriber(subscriber) }
    }

    /// Removes a subscriber from the metric manager.
    public func remove(_ subscriber: any MXMetricManagerSubscriber) {
        _ = subscribers.withLock { $0.removeValue(forKey: ObjectIdentifier(subscriber)) }
    }

    var current: [any MXMetricManagerSubscriber] {
        subscribers.withLock { $0.values.compactMap(\.subscriber) }
    }

    struct Subscriber: @unchecked Sendable {
        // MetricKit does not keep its subscribers alive.
        weak var subscriber: (any MXMetricManagerSubscriber)?
        init(_ subscriber: any MXMetricManagerSubscriber) { self.subscriber = subscriber }
    }
}

/// A protocol that defines methods to receive metric reports from the metric manager.
public protocol MXMetricManagerSubscriber: NSObjectProtocol {
    /// Receives reports of the daily metrics (optional in MetricKit).
    func didReceive(_ payloads: [MXMetricPayload])
    /// Receives reports of the diagnostics (optional in MetricKit).
    func didReceive(_ payloads: [MXDiagnosticPayload])
}

extension MXMetricManagerSubscriber {
    /// MetricKit's methods are optional: a subscriber need not receive metrics.
    public func didReceive(_ payloads: [MXMetricPayload]) {}
    /// MetricKit's methods are optional: a subscriber need not receive diagnostics.
    public func didReceive(_ payloads: [MXDiagnosticPayload]) {}
}

/// An object that contains a daily metrics report.
public final class MXMetricPayload: NSObject, @unchecked Sendable {}

/// A report of diagnostics for a period of time.
public final class MXDiagnosticPayload: NSObject, @unchecked Sendable {
    /// An array of crash diagnostics.
    public let crashDiagnostics: [MXCrashDiagnostic]?

    init(crashDiagnostics: [MXCrashDiagnostic]?) {
        self.crashDiagnostics = crashDiagnostics
    }
}

/// An object that contains the call stack tree of a diagnostic.
public final class MXCallStackTree: NSObject, @unchecked Sendable {
    private let json: Data

    init(json: Data) {
        self.json = json
    }

    /// Returns the call stack tree as a JSON representation.
    public func jsonRepresentation() -> Data { json }
}

/// The diagnostic report of an app crash.
public final class MXCrashDiagnostic: NSObject, @unchecked Sendable {
    /// The application call stack tree associated with the crash.
    public let callStackTree: MXCallStackTree
    /// The signal associated with the crash.
    public let signal: NSNumber?
    /// The name of the Mach exception that terminated the app.
    public let exceptionType: NSNumber?
    /// The termination reason associated with the crash.
    public let terminationReason: String?

    init(callStackTree: MXCallStackTree, signal: NSNumber?, exceptionType: NSNumber?, terminationReason: String?) {
        self.callStackTree = callStackTree
        self.signal = signal
        self.exceptionType = exceptionType
        self.terminationReason = terminationReason
    }
}

/// MetricKit's deliveries, for AppleAdapterTests.
public enum _MetricKitShim {
    /// A crash as MetricKit reports it: its call stack tree's JSON and its signal.
    public struct Crash: Sendable {
        public var callStackTree: Data
        public var signal: Int?
        public init(callStackTree: Data, signal: Int?) {
            self.callStackTree = callStackTree
            self.signal = signal
        }
    }

    /// Delivers one diagnostic payload holding `crashes` to every subscriber, as MetricKit does once a day.
    public static func deliverDiagnostics(_ crashes: [Crash]) {
        let payload = MXDiagnosticPayload(
            crashDiagnostics: crashes.map {
                MXCrashDiagnostic(
                    callStackTree: MXCallStackTree(json: $0.callStackTree),
                    signal: $0.signal.map { NSNumber(value: $0) },
                    exceptionType: nil, terminationReason: nil)
            })
        for subscriber in MXMetricManager.shared.current { subscriber.didReceive([payload]) }
    }

    /// How many subscribers MetricKit holds.
    public static var subscriberCount: Int { MXMetricManager.shared.current.count }
}
