// Shim of the part of Apple's Security framework FitBase's adapters call (Keychain generic-password items), written
// from Apple's documentation: same names, labels and types as the SDK. CI only (scripts/ci/apple-adapters.sh): never
// part of an app. `_SecurityShim` scripts the Keychain's answers for AppleAdapterTests; adapters never name it.
import Foundation
import Synchronization

// MARK: CoreFoundation types, as Security's importers see them

/// `OSStatus` (MacTypes): a status code, `errSecSuccess` (0) or an `errSec…` code.
public typealias OSStatus = Int32
/// `CFTypeRef`: any CoreFoundation object.
public typealias CFTypeRef = AnyObject
/// `CFString`, toll-free bridged to `String` with `as` (here: `NSString`, which Foundation on Linux bridges alike).
public typealias CFString = NSString
/// `CFDictionary`, toll-free bridged from `[String: Any]` with `as` (here: `NSDictionary`).
public typealias CFDictionary = NSDictionary

// MARK: Result codes (SecBase.h)

/// No error.
public var errSecSuccess: OSStatus { 0 }
/// One or more parameters passed to the function were not valid.
public var errSecParam: OSStatus { -50 }
/// The specified item already exists in the keychain.
public var errSecDuplicateItem: OSStatus { -25299 }
/// The specified item could not be found in the keychain.
public var errSecItemNotFound: OSStatus { -25300 }
/// Interaction with the user is required, or the item is not accessible now (before the first unlock, for one).
public var errSecInteractionNotAllowed: OSStatus { -25308 }

// MARK: Item attribute keys and values (SecItem.h); the values are Apple's.

nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"

// MARK: Functions (SecItem.h)

/// Returns one or more keychain items that match a search query, or copies attributes of specific keychain items.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    _SecurityShim.keychain.withLock { $0.copyMatching(Keychain.attributes(query), result) }
}

/// Adds one or more items to a keychain.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    let hook = _SecurityShim.keychain.withLock { state in
        defer { state.beforeNextAdd = nil }
        return state.beforeNextAdd
    }
    hook?()
    return _SecurityShim.keychain.withLock { $0.add(Keychain.attributes(attributes)) }
}

/// Modifies items that match a search query.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    _SecurityShim.keychain.withLock { $0.update(Keychain.attributes(query), Keychain.attributes(attributesToUpdate)) }
}

/// Deletes items that match a search query.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    _SecurityShim.keychain.withLock { $0.delete(Keychain.attributes(query)) }
}

// MARK: Scripted behaviour (tests only)

/// The shim's Keychain, for AppleAdapterTests: one process-wide set of generic-password items, a device that may not
/// have been unlocked since it started, statuses forced on the next calls, and a hook run before the next add (another
/// process adding the same item first).
public enum _SecurityShim {
    static let keychain = Mutex(Keychain())

    /// Empties the Keychain and clears every scripted answer.
    public static func reset() {
        keychain.withLock { $0 = Keychain() }
    }

    /// Whether the device has not been unlocked since it started: items accessible "after first unlock" are then out
    /// of reach (`errSecInteractionNotAllowed`), as on a device that restarted in the user's pocket.
    public static func setBeforeFirstUnlock(_ locked: Bool) {
        keychain.withLock { $0.beforeFirstUnlock = locked }
    }

    /// The next Keychain calls answer these statuses, in order, whatever the items.
    public static func failNextCalls(with statuses: [OSStatus]) {
        keychain.withLock { $0.forced = statuses }
    }

    /// Runs `action` just before the next `SecItemAdd` looks at the items.
    public static func beforeNextAdd(_ action: @escaping @Sendable () -> Void) {
        keychain.withLock { $0.beforeNextAdd = action }
    }

    /// Stores an item as another writer (another process, an earlier launch) would.
    public static func insert(service: String, account: String, data: Data, accessible: String = "cku") {
        keychain.withLock {
            $0.items.append(
                Keychain.Item(service: service, account: account, accessGroup: nil, data: data, accessible: accessible))
        }
    }

    /// The data of the item `service`/`account`, if any.
    public static func data(service: String, account: String) -> Data? {
        keychain.withLock { $0.items.first { $0.service == service && $0.account == account }?.data }
    }

    /// The accessibility (`kSecAttrAccessible` value) of the item `service`/`account`, if any.
    public static func accessibility(service: String, account: String) -> String? {
        keychain.withLock { $0.items.first { $0.service == service && $0.account == account }?.accessible }
    }

    /// How many items the Keychain holds.
    public static var itemCount: Int { keychain.withLock { $0.items.count } }
}

/// The generic-password items and the device state, with the rules Apple documents for each call.
struct Keychain: Sendable {
    struct Item: Sendable {
        var service: String?
        var account: String?
        var accessGroup: String?
        var data: Data
        var accessible: String
    }

    var items: [Item] = []
    var beforeFirstUnlock = false
    var forced: [OSStatus] = []
    var beforeNextAdd: (@Sendable () -> Void)?

    /// A CFDictionary's entries by key (the keys are `kSec…` strings).
    static func attributes(_ dictionary: CFDictionary) -> [String: Any] {
        var entries: [String: Any] = [:]
        for (key, value) in dictionary {
            guard let key = key as? String ?? (key as? NSString).map({ String($0) }) else { continue }
            entries[key] = value
        }
        return entries
    }

    static func string(_ value: Any?) -> String? {
        value as? String ?? (value as? NSString).map { String($0) }
    }

    /// The keys a generic-password query or item may hold; anything else is a programming error (`errSecParam`).
    static let knownKeys: Set<String> = [
        "class", "svce", "acct", "agrp", "pdmn", "r_Data", "r_Attributes", "m_Limit", "v_Data",
    ]

    private mutating func forcedStatus() -> OSStatus? {
        forced.isEmpty ? nil : forced.removeFirst()
    }

    /// `errSecParam` for a query that is not a generic-password one or holds an unknown key.
    private func invalid(_ query: [String: Any]) -> Bool {
        Self.string(query["class"]) != "genp" || !Set(query.keys).isSubset(of: Self.knownKeys)
    }

    private static func matches(_ item: Item, _ query: [String: Any]) -> Bool {
        if let service = Self.string(query["svce"]), item.service != service { return false }
        if let account = Self.string(query["acct"]), item.account != account { return false }
        if let group = Self.string(query["agrp"]), item.accessGroup != group { return false }
        return true
    }

    /// Before the first unlock only items accessible always are within reach; none of FitBase's are.
    private var locked: Bool { beforeFirstUnlock }

    mutating func copyMatching(_ query: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        if let status = forcedStatus() { return status }
        guard !invalid(query) else { return errSecParam }
        guard !locked else { return errSecInteractionNotAllowed }
        guard let item = items.first(where: { Self.matches($0, query) }) else { return errSecItemNotFound }
        if query["r_Data"] as? Bool == true {
            guard Self.string(query["m_Limit"]) == "m_LimitOne" else { return errSecParam }
            result?.pointee = NSData(data: item.data)
        }
        return errSecSuccess
    }

    mutating func add(_ attributes: [String: Any]) -> OSStatus {
        if let status = forcedStatus() { return status }
        guard !invalid(attributes), let data = attributes["v_Data"] as? Data else { return errSecParam }
        guard !locked else { return errSecInteractionNotAllowed }
        let item = Item(
            service: Self.string(attributes["svce"]), account: Self.string(attributes["acct"]),
            accessGroup: Self.string(attributes["agrp"]), data: data,
            accessible: Self.string(attributes["pdmn"]) ?? "ak")
        // The primary key of a generic password: its service, account and access group.
        if items.contains(where: {
            $0.service == item.service && $0.account == item.account && $0.accessGroup == item.accessGroup
        }) {
            return errSecDuplicateItem
        }
        items.append(item)
        return errSecSuccess
    }

    mutating func update(_ query: [String: Any], _ changes: [String: Any]) -> OSStatus {
        if let status = forcedStatus() { return status }
        // The changes may not name the class, nor ask for results.
        guard !invalid(query), changes["class"] == nil, changes["r_Data"] == nil,
            Set(changes.keys).isSubset(of: Self.knownKeys)
        else { return errSecParam }
        guard !locked else { return errSecInteractionNotAllowed }
        var found = false
        for index in items.indices where Self.matches(items[index], query) {
            found = true
            if let data = changes["v_Data"] as? Data { items[index].data = data }
            if let accessible = Self.string(changes["pdmn"]) { items[index].accessible = accessible }
        }
        return found ? errSecSuccess : errSecItemNotFound
    }

    mutating func delete(_ query: [String: Any]) -> OSStatus {
        if let status = forcedStatus() { return status }
        guard !invalid(query) else { return errSecParam }
        guard !locked else { return errSecInteractionNotAllowed }
        let before = items.count
        items.removeAll { Self.matches($0, query) }
        return items.count < before ? errSecSuccess : errSecItemNotFound
    }
}
