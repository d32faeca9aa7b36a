package kv

import "math"

// A geo set is a sorted set whose scores are 52-bit geohashes, as Redis
// keeps one: longitude and latitude each scaled to 26 bits within Redis's
// ranges (latitudes within Web Mercator's ±85.05112878°, so not the
// standard geohash's), their bits interleaved, latitude's in the even
// places. A search looks at the box of the geohash, at a precision chosen
// from the radius, around the center and at its eight neighbours, each a
// range of scores, and keeps the points within the shape; it is
// Redis's algorithm, so that the same members are found, in the same
// order, at the same distances.

const (
	geoStepMax = 26 // bits a coordinate: 52 in all
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoLonMin  = -180.0
	geoLonMax  = 180.0

	earthRadius = 6372797.560856 // meters: Redis's quadratic mean radius of WGS-84
	mercatorMax = 20037726.37
)

// degRad is Redis's M_PI/180, by which degrees become radians.
const degRad = math.Pi / 180.0

// geoHash is a geohash of step bits a coordinate.
type geoHash struct {
	bits uint64
	step uint8
}

func (h geoHash) zero() bool { return h.bits == 0 && h.step == 0 }

// geoRange is a range of degrees.
type geoRange struct{ min, max float64 }

// geoArea is a geohash's box.
type geoArea struct{ lon, lat geoRange }

var (
	geoLonRange = geoRange{geoLonMin, geoLonMax}
	geoLatRange = geoRange{geoLatMin, geoLatMax}
)

// interleave64 spreads x's low 32 bits over the even places, y's over the
// odd ones.
func interleave64(x, y uint32) uint64 {
	return spread(x) | spread(y)<<1
}

// spread moves bit i of v to bit 2i.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// deinterleave undoes interleave64: the bits of the even places, and
// those of the odd ones.
func deinterleave(v uint64) (even, odd uint32) {
	x, y := v&0x5555555555555555, v>>1&0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	y = (y | y>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	y = (y | y>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	y = (y | y>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	y = (y | y>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	y = (y | y>>16) & 0x00000000FFFFFFFF
	return uint32(x), uint32(y)
}

// geoEncode is the geohash of (lon, lat) at step bits a coordinate, in
// the ranges given, which must hold the point: every point here is within
// Redis's limits (parseLonLat, geoPoint), which the ranges hold.
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) geoHash {
	scale := float64(uint64(1) << step)
	latOff := (lat - latR.min) / (latR.max - latR.min) * scale
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min) * scale
	return geoHash{interleave64(uint32(latOff), uint32(lonOff)), step}
}

// geoDecode is h's box in the ranges given.
func geoDecode(lonR, latR geoRange, h geoHash) geoArea {
	ilat, ilon := deinterleave(h.bits)
	scale := float64(uint64(1) << h.step)
	latScale, lonScale := latR.max-latR.min, lonR.max-lonR.min
	return geoArea{
		lat: geoRange{latR.min + float64(ilat)/scale*latScale, latR.min + float64(ilat+1)/scale*latScale},
		lon: geoRange{lonR.min + float64(ilon)/scale*lonScale, lonR.min + float64(ilon+1)/scale*lonScale},
	}
}

// geoScore is the sorted set score of (lon, lat), a point within Redis's
// limits: a 52-bit integer.
func geoScore(lon, lat float64) uint64 {
	return geoEncode(geoLonRange, geoLatRange, lon, lat, geoStepMax).bits
}

// scoreBits is a score as C converts a double to uint64_t on x86-64, as
// Redis reads a geo score (a score that is not a geohash reads as some
// point all the same): through the signed conversion, whose result out of
// range is the most negative integer, below 2^63 or from 2^63 down.
func scoreBits(score float64) uint64 {
	if score >= 1<<63 {
		return uint64(truncInt64(score-(1<<63))) ^ 1<<63
	}
	return uint64(truncInt64(score))
}

// truncInt64 is x86-64's cvttsd2si: f truncated, or the most negative
// int64 when out of its range (NaN included).
func truncInt64(f float64) int64 {
	if f >= -(1<<63) && f < 1<<63 {
		return int64(f)
	}
	return math.MinInt64
}

// geoPoint is the center of the box of a score, within Redis's limits.
func geoPoint(score float64) (lon, lat float64) {
	a := geoDecode(geoLonRange, geoLatRange, geoHash{scoreBits(score), geoStepMax})
	lon = min(max((a.lon.min+a.lon.max)/2, geoLonMin), geoLonMax)
	lat = min(max((a.lat.min+a.lat.max)/2, geoLatMin), geoLatMax)
	return lon, lat
}

// geoMove moves h by one box east (d > 0) or west (d < 0) if x, north or
// south if not.
func geoMove(h geoHash, d int, x bool) geoHash {
	if d == 0 {
		return h
	}
	moving, staying := h.bits&0xaaaaaaaaaaaaaaaa, h.bits&0x5555555555555555
	mask := uint64(0x5555555555555555)
	if !x {
		moving, staying = staying, moving
		mask = 0xaaaaaaaaaaaaaaaa
	}
	zz := mask >> (64 - uint(h.step)*2)
	if d > 0 {
		moving += zz + 1
	} else {
		moving |= zz
		moving -= zz + 1
	}
	moving &= ^mask >> (64 - uint(h.step)*2)
	h.bits = moving | staying
	return h
}

// geoNeighbours are the center's box and the eight around it, in Redis's
// order: center, north, south, east, west, north-east, north-west,
// south-east, south-west.
type geoNeighbours [9]geoHash

func neighboursOf(h geoHash) geoNeighbours {
	step := func(dx, dy int) geoHash { return geoMove(geoMove(h, dx, true), dy, false) }
	return geoNeighbours{h, step(0, 1), step(0, -1), step(1, 0), step(-1, 0), step(1, 1), step(-1, 1), step(1, -1), step(-1, -1)}
}

// The neighbours' places in geoNeighbours.
const (
	nbNorth = 1 + iota
	nbSouth
	nbEast
	nbWest
	nbNorthEast
	nbNorthWest
	nbSouthEast
	nbSouthWest
)

// geoShape is a search: a circle of radius, or a box of width by height,
// in the unit toMeters converts from, around (lon, lat).
type geoShape struct {
	lon, lat      float64
	box           bool
	radius        float64
	width, height float64
	toMeters      float64
}

// estimateSteps is the precision of the boxes searched for a radius at
// latitude lat, as Redis's geohashEstimateStepsByRadius chooses it.
func estimateSteps(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// bounds is the shape's bounding box: longitudes and latitudes.
func (sh *geoShape) bounds() (lon, lat geoRange) {
	height, width := sh.radius, sh.radius
	if sh.box {
		height, width = sh.height/2, sh.width/2
	}
	height *= sh.toMeters
	width *= sh.toMeters
	latDelta := height / earthRadius / degRad
	top := width / earthRadius / math.Cos((sh.lat+latDelta)*degRad) / degRad
	bottom := width / earthRadius / math.Cos((sh.lat-latDelta)*degRad) / degRad
	lonDelta := top
	if sh.lat < 0 {
		lonDelta = bottom
	}
	return geoRange{sh.lon - lonDelta, sh.lon + lonDelta}, geoRange{sh.lat - latDelta, sh.lat + latDelta}
}

// areas are the boxes that cover the shape (the zero ones are left out),
// as Redis's geohashCalculateAreasByShapeWGS84 chooses them.
func (sh *geoShape) areas() geoNeighbours {
	lonB, latB := sh.bounds()
	meters := sh.radius
	if sh.box {
		meters = math.Sqrt((sh.width/2)*(sh.width/2) + (sh.height/2)*(sh.height/2))
	}
	meters *= sh.toMeters
	steps := estimateSteps(meters, sh.lat)
	h := geoEncode(geoLonRange, geoLatRange, sh.lon, sh.lat, steps)
	nb := neighboursOf(h)
	area := geoDecode(geoLonRange, geoLatRange, h)
	north := geoDecode(geoLonRange, geoLatRange, nb[nbNorth])
	south := geoDecode(geoLonRange, geoLatRange, nb[nbSouth])
	east := geoDecode(geoLonRange, geoLatRange, nb[nbEast])
	west := geoDecode(geoLonRange, geoLatRange, nb[nbWest])
	tooBig := north.lat.max < latB.max || south.lat.min > latB.min || east.lon.max < lonB.max || west.lon.min > lonB.min
	if steps > 1 && tooBig {
		steps--
		h = geoEncode(geoLonRange, geoLatRange, sh.lon, sh.lat, steps)
		nb = neighboursOf(h)
		area = geoDecode(geoLonRange, geoLatRange, h)
	}
	if steps >= 2 {
		drop := func(is ...int) {
			for _, i := range is {
				nb[i] = geoHash{}
			}
		}
		if area.lat.min < latB.min {
			drop(nbSouth, nbSouthWest, nbSouthEast)
		}
		if area.lat.max > latB.max {
			drop(nbNorth, nbNorthEast, nbNorthWest)
		}
		if area.lon.min < lonB.min {
			drop(nbWest, nbSouthWest, nbNorthWest)
		}
		if area.lon.max > lonB.max {
			drop(nbEast, nbSouthEast, nbNorthEast)
		}
	}
	return nb
}

// scoreRange is the scores of the points in h's box: from min, below max.
func (h geoHash) scores() (lo, hi float64) {
	shift := 52 - uint(h.step)*2
	return float64(h.bits << shift), float64((h.bits + 1) << shift)
}

// geoLatDistance is the distance along a meridian between two latitudes.
func geoLatDistance(lat1, lat2 float64) float64 {
	return earthRadius * math.Abs(lat2*degRad-lat1*degRad)
}

// geoDistance is the haversine distance in meters, as Redis computes it.
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	return geoDistanceCos(math.Cos(lat1*degRad), lon1, lat1, lon2, lat2)
}

// geoDistanceCos is geoDistance with the cosine of lat1 (in radians)
// given, for the many distances from one center.
func geoDistanceCos(cosLat1, lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := lon1*degRad, lon2*degRad
	v := math.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := lat1*degRad, lat2*degRad
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + cosLat1*math.Cos(lat2r)*v*v
	return 2 * earthRadius * math.Asin(math.Sqrt(a))
}

// within reports whether the point (lon, lat) is in the shape, with its
// distance in meters from the center; cosLat is the cosine of the
// center's latitude.
func (sh *geoShape) within(cosLat, lon, lat float64) (float64, bool) {
	if !sh.box {
		r := sh.radius * sh.toMeters
		// A great circle between two latitudes is no shorter than the
		// meridian's arc between them: a point whose latitude alone is
		// past the radius (by more than rounding) is out, without the
		// trigonometry.
		if geoLatDistance(sh.lat, lat) > r*(1+1e-9) {
			return 0, false
		}
		d := geoDistanceCos(cosLat, sh.lon, sh.lat, lon, lat)
		return d, d <= r
	}
	if geoLatDistance(lat, sh.lat) > sh.height*sh.toMeters/2 {
		return 0, false
	}
	if geoDistance(lon, lat, sh.lon, lat) > sh.width*sh.toMeters/2 {
		return 0, false
	}
	return geoDistanceCos(cosLat, sh.lon, sh.lat, lon, lat), true
}

// geohashString is the standard 11-character geohash of a score: its
// point encoded again in the standard ranges, as GEOHASH answers.
func geohashString(score float64) string {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	lon, lat := geoPoint(score)
	h := geoEncode(geoRange{-180, 180}, geoRange{-90, 90}, lon, lat, geoStepMax)
	var b [11]byte
	for i := range 10 {
		b[i] = alphabet[h.bits>>(52-(uint(i)+1)*5)&0x1f]
	}
	b[10] = alphabet[0] // 52 bits make ten characters; the eleventh is 0
	return string(b[:])
}
