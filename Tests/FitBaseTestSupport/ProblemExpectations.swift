import FitBaseCore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Decodes a JSON object body.
package func json(_ response: TestResponse) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
}

/// Checks the RFC 9457 shape and the stable code, and returns the problem's fields.
@discardableResult
package func expectProblem(_ response: TestResponse, _ code: ProblemCode, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
    let problem = try json(response)
    #expect(problem["code"] as? String == code.rawValue, sourceLocation: sourceLocation)
    #expect(problem["status"] as? Int == Int(response.status.code), sourceLocation: sourceLocation)
    #expect(problem["type"] as? String == "urn:fitbase:problem:\(code.rawValue)", sourceLocation: sourceLocation)
    #expect((problem["title"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    return problem
}

/// The code of the problem a batch's result carries (a sync push's or an upload's `problem`), if it carries one the
/// contract knows.
package func problemCode(in result: [String: Any]?) -> ProblemCode? {
    ((result?["problem"] as? [String: Any])?["code"] as? String).flatMap(ProblemCode.init(rawValue:))
}
