import FitBaseAPI
import FitBaseCore
import Foundation
import Testing

@testable import FitBaseClient

/// The SDK's view of a server problem: a typed code to switch over, and the raw code of one a newer server added.
@Suite struct APIProblemTests {
    static func problem(_ json: String) throws -> APIProblem {
        APIProblem(try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(json.utf8)))
    }

    @Test func aKnownCodeIsTypedAndAnUpgradeNamesItsTier() throws {
        let problem = try Self.problem(
            #"{"type":"urn:fitbase:problem:upgrade_required","title":"Payment Required","status":402,"code":"upgrade_required","requiredTier":"pro"}"#
        )
        #expect(problem.code == .upgradeRequired)
        #expect(problem.rawCode == "upgrade_required")
        #expect(problem.requiredTier == .pro)
        #expect(problem.status == 402)
    }

    @Test func aCodeFromANewerServerIsKeptRaw() throws {
        let problem = try Self.problem(
            #"{"type":"urn:fitbase:problem:brand_new_rule","title":"Conflict","status":409,"code":"brand_new_rule","detail":"Something new."}"#
        )
        #expect(problem.code == nil)
        #expect(problem.rawCode == "brand_new_rule")
        #expect(FitBaseError.problem(problem).userFacingMessage == "Something new.")
    }

    @Test func aTierFromANewerServerStillReadsAsAnUpgrade() throws {
        let problem = try Self.problem(
            #"{"type":"urn:fitbase:problem:upgrade_required","title":"Payment Required","status":402,"code":"upgrade_required","requiredTier":"platinum","detail":"Needs Platinum."}"#
        )
        #expect(problem.code == .upgradeRequired && problem.status == 402 && problem.detail == "Needs Platinum.")
        #expect(problem.requiredTier == nil && problem.rawRequiredTier == "platinum")
    }
}
