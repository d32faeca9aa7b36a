package main

import (
	"testing"
)

const testSchema = `
type Query { _unused: Boolean }
type Subscription {
  employeeUpdated(id: ID!): Employee! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}", "all.{{ args.id }}.x"])
}
type Employee { id: ID! tags: [String!] details: Details! manager: Employee }
type Details { forename: String! surname: String! }
`

const testEvent = `{"id":"7","tags":["a","b"],"details":{"forename":"Ada","surname":"Lovelace"},"manager":{"id":"1","details":{"forename":"Bo","surname":"X"}},"extra":1.50}`

func TestProjection(t *testing.T) {
	s, err := loadSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		subjects    []string
		want        string
	}{
		{
			name:     "fields in selection order",
			query:    `subscription($id: ID!) { employeeUpdated(id: $id) { details { forename } id } }`,
			vars:     map[string]any{"id": "7"},
			subjects: []string{"employee.7", "all.7.x"},
			want:     `{"data":{"employeeUpdated":{"details":{"forename":"Ada"},"id":"7"}}}`,
		},
		{
			name:     "aliases, lists, typename, nested objects, fragments",
			query:    `subscription { e: employeeUpdated(id: "3") { __typename t: tags manager { ...M } ... on Employee { id } } } fragment M on Employee { details { surname } }`,
			subjects: []string{"employee.3", "all.3.x"},
			want:     `{"data":{"e":{"__typename":"Employee","t":["a","b"],"manager":{"details":{"surname":"X"}},"id":"7"}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, errs := s.prepare(&request{Query: tc.query, Variables: tc.vars})
			if errs != nil {
				t.Fatalf("prepare = %v", errs)
			}
			if len(op.subjects) != 2 || op.subjects[0] != tc.subjects[0] || op.subjects[1] != tc.subjects[1] {
				t.Errorf("subjects = %q; want %q", op.subjects, tc.subjects)
			}
			if got := string(op.appendResult(nil, decodeEvent([]byte(testEvent)))); got != tc.want {
				t.Errorf("appendResult =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, errs := s.prepare(&request{Query: `subscription { employeeUpdated { id } }`}); errs == nil {
		t.Error("prepare without the required argument succeeded")
	}
}
