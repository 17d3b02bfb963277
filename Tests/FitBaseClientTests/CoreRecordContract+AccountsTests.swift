import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

/// The account's consents and signed-in devices are Core's records of the contract's JSON: the Kit reads
/// ``listConsents``, ``recordConsent`` and ``listSessions`` with ``ContractJSON/record(_:from:)``, no copy by hand.
@Suite struct CoreRecordContractAccountsTests {
    @Test func aConsentIsTheContractsConsentWithItsHistory() throws {
        let earlier = ConsentRecord.Answer(version: "2025-06", granted: false, recordedAt: CoreRecordContractTests.instant.addingTimeInterval(-86_400))
        let consent = ConsentRecord(
            kind: .healthData, version: "2026-01", granted: true, recordedAt: CoreRecordContractTests.instant,
            history: [earlier, .init(version: "2026-01", granted: true, recordedAt: CoreRecordContractTests.instant)]
        )
        let wire = try CoreRecordContractTests.roundTrip(consent, as: Components.Schemas.Consent.self)
        #expect(wire.kind == .healthData && wire.version == "2026-01" && wire.granted && wire.recordedAt == CoreRecordContractTests.instant)
        #expect(wire.history.map(\.version) == ["2025-06", "2026-01"] && wire.history.map(\.granted) == [false, true])
        // A new answer's history is the answer itself, as the server's first answer of a kind.
        #expect(ConsentRecord(kind: .terms, version: "1", granted: true, recordedAt: CoreRecordContractTests.instant).history.count == 1)
    }

    @Test func aSignedInSessionIsTheContractsSessionInfo() throws {
        let session = SignedInSession(
            id: SessionID(), deviceLabel: "Ana's iPhone", createdAt: CoreRecordContractTests.instant,
            lastUsedAt: CoreRecordContractTests.instant.addingTimeInterval(60), isCurrent: true
        )
        let wire = try CoreRecordContractTests.roundTrip(session, as: Components.Schemas.SessionInfo.self)
        #expect(wire.id == session.id.description && wire.current && wire.deviceLabel == "Ana's iPhone")
        let unlabelled = SignedInSession(
            id: SessionID(), deviceLabel: nil, createdAt: CoreRecordContractTests.instant, lastUsedAt: CoreRecordContractTests.instant, isCurrent: false)
        #expect(try CoreRecordContractTests.roundTrip(unlabelled, as: Components.Schemas.SessionInfo.self).deviceLabel == nil)
    }
}
