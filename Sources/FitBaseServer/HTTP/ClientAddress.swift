import Foundation
import NIOCore

/// The address of the client behind a request, for per-client limits: the socket's peer, or — when the peer is a
/// proxy listed in `FITBASE_TRUSTED_PROXIES` — the nearest address in `X-Forwarded-For` that is not a trusted proxy.
/// A client can write anything into `X-Forwarded-For`, so it is believed only as far as trusted proxies vouch for it.
enum ClientAddress {
    /// The client's address, or `nil` when the connection has none (a Unix socket, an in-process test).
    static func resolve(peer: SocketAddress?, forwardedFor: String?, trusted: [AddressRange]) -> String? {
        guard let peerAddress = peer?.ipAddress else { return nil }
        guard let peerBytes = AddressRange.bytes(of: peerAddress), trusted.contains(where: { $0.contains(peerBytes) }) else {
            return peerAddress
        }
        // Walk from the right: each hop was appended by the proxy before it.
        let hops = (forwardedFor ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peerAddress
        for hop in hops.reversed() {
            guard let bytes = AddressRange.bytes(of: hop) else { break }
            client = hop
            if !trusted.contains(where: { $0.contains(bytes) }) { break }
        }
        return client
    }

    /// The bucket `address` counts in for per-client limits: an IPv4 address itself, an IPv6 address's /64 (one
    /// customer's network: a host picks any of its 2^64 addresses at will, so counting them apart counts nothing).
    static func bucket(of address: String) -> String {
        guard let bytes = AddressRange.bytes(of: address) else { return address }
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `::1`, `192.168.1.7`), as `FITBASE_TRUSTED_PROXIES` lists them.
struct AddressRange: Sendable, Equatable {
    let network: [UInt8]
    let prefixLength: Int

    /// Parses `address` or `address/prefix`; `nil` when it is neither.
    init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = Self.bytes(of: first) else { return nil }
        let length: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...bytes.count * 8).contains(parsed) else { return nil }
            length = parsed
        } else {
            length = bytes.count * 8
        }
        self.network = bytes
        self.prefixLength = length
    }

    func contains(_ address: [UInt8]) -> Bool {
        guard address.count == network.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(address, network) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if a & mask != b & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// The 4 or 16 bytes of an IP address in text form; IPv4-mapped IPv6 addresses become IPv4.
    static func bytes(of text: String) -> [UInt8]? {
        let text = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes.suffix(4)) }
            return bytes
        }
        return nil
    }
}
