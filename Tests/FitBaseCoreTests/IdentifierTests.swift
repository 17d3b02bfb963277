import FitBaseCore
import Foundation
import Testing

@Suite struct IdentifierTests {
    private enum Workout {}

    @Test func encodesAsALowerCaseUUIDString() throws {
        let id = Identifier<Workout>(rawValue: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["e621e1f8-c36c-495a-93fc-0c247a3e6e5f"]"#)
        #expect(try JSONDecoder().decode([Identifier<Workout>].self, from: data) == [id])
    }

    @Test func parsesEitherCaseAndRejectsNonUUIDs() {
        #expect(Identifier<Workout>("E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == Identifier<Workout>("e621e1f8-c36c-495a-93fc-0c247a3e6e5f"))
        #expect(Identifier<Workout>("not-a-uuid") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Identifier<Workout>].self, from: Data(#"["nope"]"#.utf8)) }
    }

    @Test func freshIdentifiersDiffer() {
        #expect(Identifier<Workout>() != Identifier<Workout>())
    }

    @Test func lowercasedTextIsTheCanonicalForm() {
        #expect(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")?.lowercasedString == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        for _ in 0..<1_000 {
            let uuid = UUID()
            #expect(uuid.lowercasedString == uuid.uuidString.lowercased())
        }
    }

    @Test func identifiersOrderAsTheirText() {
        let ids = (0..<1_000).map { _ in Identifier<Workout>() }
        #expect(ids.sorted().map(\.description) == ids.map(\.description).sorted())
        let low = Identifier<Workout>("0fffffff-ffff-4fff-bfff-ffffffffffff")!
        let high = Identifier<Workout>("a0000000-0000-4000-8000-000000000000")!
        #expect(low < high && !(high < low) && !(low < low))
    }
}
