import FitBaseCore
import Testing

/// The one rule of an account's display name, which the server, the forms, the fakes and the provider sign-ins share.
@Suite struct DisplayNameRuleTests {
    @Test func aNameIsKeptTrimmedAndNoneWhenEmpty() throws {
        #expect(try DisplayNameRule.checked("  Ana \n") == "Ana")
        #expect(try DisplayNameRule.checked(" \t ") == nil)
        // The maximum counts what is kept: 100 characters with spaces around them pass.
        let hundred = String(repeating: "é", count: 100)
        #expect(try DisplayNameRule.checked("  \(hundred) ") == hundred)
        #expect(!DisplayNameRule.isTooLong(" \(hundred) "))
    }

    @Test func aLongerNameIsRefusedUnderItsField() {
        let long = String(repeating: "b", count: DisplayNameRule.maximumCharacters + 1)
        #expect(DisplayNameRule.isTooLong(long))
        #expect(throws: InvalidFields([FieldError(field: "displayName", message: "must be at most 100 characters")])) {
            try DisplayNameRule.checked(long)
        }
    }

    @Test func aProvidersNameIsCutToTheMaximumWithoutATrailingSpace() throws {
        // Apple's given and family names joined: 99 characters, a space, one more.
        let joined = String(repeating: "A", count: 99) + " Z"
        let kept = try #require(DisplayNameRule.truncated(joined))
        #expect(kept == String(repeating: "A", count: 99))
        #expect(try DisplayNameRule.checked(kept) == kept)
        #expect(DisplayNameRule.truncated("  Grace Hopper ") == "Grace Hopper")
        #expect(DisplayNameRule.truncated("   ") == nil && DisplayNameRule.truncated(nil) == nil)
    }
}
