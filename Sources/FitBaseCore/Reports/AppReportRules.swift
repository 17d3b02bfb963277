import Foundation

/// What a batch of app reports may hold (`POST /v1/reports`), checked before anything is stored.
///
/// The rule: a report says what went wrong or how long something took, never anything about the person. So there is
/// no free text anywhere — an error's code is a ``ProblemCode`` or one of the Kit's error kinds (``kitErrorKinds``); a
/// location, operation or module is an identifier (letters, digits, `_`, `.`, `-`, no spaces, at most 64); a symbol
/// is a mangled or dotted identifier; versions and device models have strict patterns; numbers are bounded. A field a
/// kind does not use must be absent (an error carries no frames, a trace no code). Names and symbols that spell out
/// contact details in identifier characters (`call-support-at-evil-example-com`, `www.x.io`, `tel-555-123-4567`) are
/// refused too (``looksLikeContactDetails(_:)``): they would reach operators' screens as a message from a stranger.
public enum AppReportRules {
    /// Reports one request may send.
    public static let maximumBatch = 50
    /// Frames one crash may carry.
    public static let maximumFrames = 64
    /// The longest trace kept: ten minutes.
    public static let maximumDurationMilliseconds = 600_000
    /// How far back a report may have happened, and how far ahead of the server's clock a device's may run.
    public static let maximumAge: TimeInterval = 30 * 86_400
    public static let maximumClockSkew: TimeInterval = 3_600

    /// The Kit's error kinds (`KitError.Kind`), which an error report may name as its code beside ``ProblemCode``s.
    public static let kitErrorKinds: Set<String> = [
        "offline", "notSignedIn", "invalidCredentials", "reauthenticationRequired", "upgradeRequired", "invalidInput", "notFound", "conflict",
        "rateLimited", "forbidden", "server", "storage", "cancelled", "purchaseFailed",
    ]

    /// Signals and Mach exceptions a crash may name.
    public static let exceptionTypes: Set<String> = [
        "EXC_BAD_ACCESS", "EXC_BAD_INSTRUCTION", "EXC_ARITHMETIC", "EXC_BREAKPOINT", "EXC_CRASH", "EXC_GUARD", "EXC_RESOURCE", "EXC_SOFTWARE",
        "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGSEGV", "SIGTRAP", "SIGKILL", "SIGSYS", "UNCAUGHT_ERROR",
    ]

    /// Every broken rule of `reports` (field paths `reports[i].…`), empty when the batch may be stored.
    public static func violations(of reports: [AppReport], now: Date) -> [FieldError] {
        guard !reports.isEmpty else { return [FieldError(field: "reports", message: "must hold at least one report")] }
        guard reports.count <= maximumBatch else { return [FieldError(field: "reports", message: "must have at most \(maximumBatch) items")] }
        var errors: [FieldError] = []
        var seen: Set<UUID> = []
        for (index, report) in reports.enumerated() {
            let path = "reports[\(index)]"
            func refuse(_ field: String, _ message: String) { errors.append(FieldError(field: "\(path).\(field)", message: message)) }
            if !seen.insert(report.id).inserted { refuse("id", "repeats an earlier report's id in this batch") }
            if report.occurredAt < now.addingTimeInterval(-maximumAge) {
                refuse("occurredAt", "must be within the last \(Int(maximumAge / 86_400)) days")
            } else if report.occurredAt > now.addingTimeInterval(maximumClockSkew) {
                refuse("occurredAt", "must not be in the future")
            }
            if SemanticVersion(report.appVersion) == nil { refuse("appVersion", "must be a version like 1.4.2") }
            if let os = report.osVersion, SemanticVersion(os) == nil { refuse("osVersion", "must be a version like 17.4.1") }
            if !isDeviceModel(report.deviceModel) { refuse("deviceModel", "must be a model identifier like iPhone15,2 (letters, digits and one comma)") }
            let unused = { (field: String, present: Bool) in if present { refuse(field, "is not part of a \(report.kind.rawValue) report") } }
            switch report.kind {
            case .error:
                if let code = report.code {
                    if ProblemCode(rawValue: code) == nil && !kitErrorKinds.contains(code) { refuse("code", "must be a problem code or one of the Kit's error kinds") }
                } else {
                    refuse("code", "is required for an error")
                }
                if let location = report.location {
                    if !isIdentifier(location) { refuse("location", nameMessage(location, "a screen or operation name")) }
                } else {
                    refuse("location", "is required for an error")
                }
                unused("exceptionType", report.exceptionType != nil)
                unused("frames", !report.frames.isEmpty)
                unused("operation", report.operation != nil)
                unused("durationMilliseconds", report.durationMilliseconds != nil)
            case .crash:
                if let type = report.exceptionType, !exceptionTypes.contains(type) { refuse("exceptionType", "must be a signal or exception name (SIGABRT, EXC_BAD_ACCESS)") }
                if report.frames.isEmpty || report.frames.count > maximumFrames {
                    refuse("frames", "must hold 1 to \(maximumFrames) frames")
                } else {
                    for (position, frame) in report.frames.enumerated() {
                        let field = "frames[\(position)]"
                        if !isIdentifier(frame.module) { refuse("\(field).module", nameMessage(frame.module, "a module name")) }
                        if !isSymbol(frame.symbol) {
                            refuse("\(field).symbol", looksLikeContactDetails(frame.symbol)
                                ? contactMessage : "must be a symbol (letters, digits, _, $ and ., up to 256)")
                        }
                        if !(0...Int(UInt32.max)).contains(frame.offset) { refuse("\(field).offset", "must be from 0 to \(UInt32.max)") }
                    }
                }
                unused("code", report.code != nil)
                if let location = report.location, !isIdentifier(location) {
                    refuse("location", nameMessage(location, "a screen or operation name"))
                }
                unused("operation", report.operation != nil)
                unused("durationMilliseconds", report.durationMilliseconds != nil)
            case .trace:
                if let operation = report.operation {
                    if !isIdentifier(operation) { refuse("operation", nameMessage(operation, "an operation name")) }
                } else {
                    refuse("operation", "is required for a trace")
                }
                if let duration = report.durationMilliseconds {
                    if !(0...maximumDurationMilliseconds).contains(duration) { refuse("durationMilliseconds", "must be from 0 to \(maximumDurationMilliseconds)") }
                } else {
                    refuse("durationMilliseconds", "is required for a trace")
                }
                unused("code", report.code != nil)
                unused("location", report.location != nil)
                unused("exceptionType", report.exceptionType != nil)
                unused("frames", !report.frames.isEmpty)
            }
        }
        return errors
    }

    /// `leaderboard`, `sync.push`, `FitBaseKit`: a letter, then up to 63 letters, digits, `_`, `.` and `-`, and not
    /// contact details spelled that way (``looksLikeContactDetails(_:)``).
    public static func isIdentifier(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let first = bytes.first, isLetter(first), bytes.count <= 64 else { return false }
        guard bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D }) else { return false }
        return !looksLikeContactDetails(text)
    }

    /// A mangled Swift symbol (`$s10FitBaseKit…`) or a dotted or C name (`main`, `Foo.bar`): a letter, `_` or `$` then
    /// up to 255 letters, digits, `_`, `$` and `.`, and not contact details spelled that way.
    public static func isSymbol(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let first = bytes.first, isLetter(first) || first == 0x5F || first == 0x24, bytes.count <= 256 else { return false }
        guard bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x5F || $0 == 0x24 || $0 == 0x2E }) else { return false }
        return !looksLikeContactDetails(text)
    }

    /// Words that only a link or an address has: a scheme, `www`.
    public static let linkWords: Set<String> = ["http", "https", "www", "mailto", "tel", "ftp"]
    /// Top-level domains that mark the word before them as a host name (`example-com`, `x.io`).
    public static let domainWords: Set<String> = ["com", "net", "org", "edu", "gov", "io", "xyz"]
    /// Digits in one run (separators `.`, `-`, `_` and spaces between them allowed) from which a text reads as a phone
    /// number.
    public static let phoneDigits = 7

    /// Whether `text` spells an e-mail address, a link or a phone number, however its characters are disguised. The text
    /// is cut into words at every character that is not a letter (`call-support-at-evil-example-com` → `call`, `support`,
    /// `at`, `evil`, `example`, `com`; a mangled `$s4evil7example3com` → `s`, `evil`, `example`, `com`) and refused when:
    /// it holds `@` or `:`; a word is a scheme or `www` (``linkWords``); a word after the first is a common top-level
    /// domain (``domainWords``: `example-com`, `evil.example.com`, `x.io`); or it has a run of ``phoneDigits`` or more
    /// digits, single `.`, `-`, `_` or spaces between them allowed (`555-123-4567`). Names apps really use
    /// (`leaderboard.fetch`, `sync.at-launch`, `FitBaseKit`, `$s10FitBaseKit16LeaderboardModelC4loadyyYaF`) pass.
    public static func looksLikeContactDetails(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        if bytes.contains(0x40) || bytes.contains(0x3A) { return true }
        let words = text.lowercased().split { !$0.isASCII || !$0.isLetter }.map(String.init)
        if words.contains(where: linkWords.contains) { return true }
        if words.dropFirst().contains(where: domainWords.contains) { return true }
        var run = 0
        var previousWasSeparator = false
        for byte in bytes {
            if isDigit(byte) {
                run += 1
                if run >= phoneDigits { return true }
                previousWasSeparator = false
            } else if [0x2E, 0x2D, 0x5F, 0x20].contains(byte), run > 0, !previousWasSeparator {
                previousWasSeparator = true
            } else {
                run = 0
                previousWasSeparator = false
            }
        }
        return false
    }

    static let contactMessage = "must not look like an e-mail address, a link or a phone number"

    /// Why `name` is refused as `what`: contact details, or not an identifier at all.
    static func nameMessage(_ name: String, _ what: String) -> String {
        looksLikeContactDetails(name) ? contactMessage : "must be \(what) (letters, digits, _, . and -)"
    }

    /// `iPhone15,2`, `iPad13,1`, `arm64`, `x86_64`: a letter, then 1–19 letters, digits and `_`, then optionally a
    /// comma and 1–3 digits.
    public static func isDeviceModel(_ text: String) -> Bool {
        let parts = text.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = parts.first?.utf8, let first = name.first, isLetter(first), (2...20).contains(name.count),
            name.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x5F })
        else { return false }
        guard parts.count == 2 else { return true }
        return (1...3).contains(parts[1].utf8.count) && parts[1].utf8.allSatisfy(isDigit)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}
