package kv

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestCompatGeo compares the geo commands with Redis's, reply for reply:
// points, distances in every unit, geohashes, searches of each kind with
// each option, stores, and the errors of bad arguments, in RESP2 and 3.
func TestCompatGeo(t *testing.T) {
	sicily := []string{"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2"}
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			compareWithRedis(t, [][]string{
				{"HELLO", proto},
				sicily, {"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo"}, {"GEOADD", "Sicily", "CH", "13.3614", "38.1156", "Palermo"},
				{"GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "new"}, {"GEOADD", "Sicily", "XX", "CH", "3", "3", "new", "4", "4", "newer"},
				{"GEOADD", "Sicily", "NX", "XX", "1", "1", "x"}, {"GEOADD", "Sicily", "1", "1"}, {"GEOADD", "Sicily", "GT", "1", "1", "x"},
				{"GEOADD", "Sicily", "200", "1", "x"}, {"GEOADD", "Sicily", "1", "86", "x"}, {"GEOADD", "Sicily", "inf", "1", "x"}, {"GEOADD", "Sicily", "a", "1", "x"},
				{"GEOADD", "Sicily", "180", "85.05112878", "corner", "-180", "-85.05112878", "other"},
				{"GEOPOS", "Sicily", "Palermo", "Catania", "missing", "corner", "other", "new"}, {"GEOPOS", "none", "a", "b"},
				{"GEODIST", "Sicily", "Palermo", "Catania"}, {"GEODIST", "Sicily", "Palermo", "Catania", "km"}, {"GEODIST", "Sicily", "Palermo", "Catania", "MI"},
				{"GEODIST", "Sicily", "Palermo", "Catania", "ft"}, {"GEODIST", "Sicily", "Palermo", "Palermo"}, {"GEODIST", "Sicily", "Palermo", "missing"},
				{"GEODIST", "Sicily", "Palermo", "Catania", "yd"}, {"GEODIST", "Sicily", "Palermo", "Catania", "km", "x"}, {"GEODIST", "none", "a", "b"},
				{"GEOHASH", "Sicily", "Palermo", "Catania", "missing", "corner", "other"}, {"GEOHASH", "none", "a"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km"}, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "DESC"}, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"}, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"}, {"GEORADIUS", "Sicily", "15", "37", "-1", "km"}, {"GEORADIUS", "Sicily", "15", "37", "x", "km"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "parsec"}, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "BOGUS"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst"}, {"ZRANGE", "dst", "0", "-1", "WITHSCORES"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst", "ASC"}, {"ZRANGE", "dst", "0", "-1"},
				{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "WITHDIST"}, {"GEORADIUS", "Sicily", "0", "0", "1", "m", "STORE", "dst"}, {"EXISTS", "dst"},
				{"GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "dst"}, {"GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST"},
				{"GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST"}, {"GEORADIUSBYMEMBER", "Sicily", "missing", "200", "km"},
				{"GEORADIUSBYMEMBER", "none", "missing", "x", "y"}, {"GEORADIUSBYMEMBER_RO", "Sicily", "Catania", "100", "mi", "WITHCOORD"},
				{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "ASC", "WITHCOORD", "WITHDIST"},
				{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "DESC", "WITHHASH"},
				{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"},
				{"GEOSEARCH", "Sicily", "BYRADIUS", "1", "km"}, {"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "-1", "1", "km"}, {"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "x", "km"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "-1", "x", "km"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STORE", "x"}, {"GEOSEARCH", "none", "FROMMEMBER", "x", "BYRADIUS", "1", "km"},
				{"GEOSEARCH", "Sicily", "FROMMEMBER", "missing", "BYRADIUS", "1", "km"},
				{"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "STOREDIST"}, {"ZRANGE", "dst", "0", "-1"},
				{"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "2"}, {"ZRANGE", "dst", "0", "-1", "WITHSCORES"},
				{"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"},
				{"GEOSEARCHSTORE", "dst", "none", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"}, {"EXISTS", "dst"},
				{"SET", "str", "x"}, {"GEOADD", "str", "1", "1", "a"}, {"GEOPOS", "str", "a"}, {"GEODIST", "str", "a", "b"}, {"GEOHASH", "str", "a"},
				{"GEOSEARCH", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"}, {"GEORADIUS", "str", "0", "0", "1", "km"},
				{"ZADD", "z", "-5", "neg", "1e300", "huge", "-1e300", "-huge", "2e19", "past", "1.8e19", "near", "4503599627370495", "max"},
				{"GEOPOS", "z", "neg", "huge", "-huge", "past", "near", "max"}, {"GEOHASH", "z", "neg", "huge", "-huge", "past", "near", "max"},
				{"COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STORE", "d1", "STOREDIST", "d2"},
				{"COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "m"},
			})
		})
	}
}

// TestGeoDifferential adds random points and runs random searches of
// every kind against evkv and Redis, comparing every reply: the boxes
// searched, the points kept and their order, the distances.
func TestGeoDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	coord := func(lo, hi float64) string { return strconv.FormatFloat(lo+rng.Float64()*(hi-lo), 'f', 6, 64) }
	script := [][]string{}
	// Clusters, so that searches find several: around a few centers, and
	// some points anywhere (the poles' latitudes and the antimeridian too).
	centers := [][2]float64{{13.4, 38.1}, {-0.12, 51.5}, {179.9, -16.5}, {-73.9, 40.7}, {0, 84.9}}
	for i := range 600 {
		c := centers[i%len(centers)]
		lon, lat := coord(c[0]-1, min(c[0]+1, 180)), coord(c[1]-1, min(c[1]+1, 85))
		if i%7 == 0 {
			lon, lat = coord(-180, 180), coord(-85, 85)
		}
		script = append(script, []string{"GEOADD", "g", lon, lat, "m" + strconv.Itoa(i)})
	}
	units := []string{"m", "km", "mi", "ft"}
	for range 400 {
		c := centers[rng.IntN(len(centers))]
		from := []string{"FROMLONLAT", coord(c[0]-1, min(c[0]+1, 180)), coord(c[1]-1, min(c[1]+1, 85))}
		if rng.IntN(3) == 0 {
			from = []string{"FROMMEMBER", "m" + strconv.Itoa(rng.IntN(600))}
		}
		unit := units[rng.IntN(len(units))]
		scale := map[string]float64{"m": 1, "km": 0.001, "mi": 0.00062, "ft": 3.28}[unit]
		dist := func() string { return strconv.FormatFloat(rng.Float64()*rng.Float64()*300000*scale, 'f', 3, 64) }
		by := []string{"BYRADIUS", dist(), unit}
		if rng.IntN(2) == 0 {
			by = []string{"BYBOX", dist(), dist(), unit}
		}
		args := append(append([]string{"GEOSEARCH", "g"}, from...), by...)
		switch rng.IntN(4) {
		case 0:
			args = append(args, "ASC")
		case 1:
			args = append(args, "DESC", "COUNT", strconv.Itoa(1+rng.IntN(5)))
		case 2:
			args = append(args, "COUNT", strconv.Itoa(1+rng.IntN(5)), "ANY")
		}
		args = append(args, "WITHDIST", "WITHCOORD", "WITHHASH")
		script = append(script, args)
		if rng.IntN(4) == 0 {
			script = append(script, []string{"GEORADIUS", "g", coord(-180, 180), coord(-85, 85), dist(), unit, "WITHDIST", "ASC"})
		}
	}
	compareWithRedis(t, script)
}

// TestCompatGeoCountTies: a search that sorts and keeps fewer points than
// it finds sorts them as Redis's pqsort does, so that among equal
// distances the same points are kept, in the same order; one that keeps
// them all keeps the order found among equal distances.
func TestCompatGeoCountTies(t *testing.T) {
	add := []string{"GEOADD", "g"}
	for i := range 60 {
		p := [][2]string{{"13.361389", "38.115556"}, {"13.4", "38.2"}, {"13.5", "38.1"}}[i%3]
		add = append(add, p[0], p[1], "m"+strconv.Itoa(i))
	}
	script := [][]string{add}
	for _, count := range []string{"1", "2", "7", "20", "41", "59", "60", "61"} {
		for _, order := range []string{"ASC", "DESC"} {
			script = append(script,
				[]string{"GEOSEARCH", "g", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "100", "km", order, "COUNT", count},
				[]string{"GEORADIUS", "g", "13.45", "38.15", "100", "km", order, "COUNT", count, "WITHDIST"},
				[]string{"GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "m0", "BYBOX", "100", "100", "km", order, "COUNT", count},
				[]string{"ZRANGE", "dst", "0", "-1"})
		}
	}
	compareWithRedis(t, script)
}
