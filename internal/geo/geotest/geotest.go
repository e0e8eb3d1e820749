// Package geotest holds the oracles the geo tests check S2's answers
// against, computed without S2: great-circle distances by the haversine
// formula, and whether a point lies in the smaller region a ring bounds
// by the winding angle the ring sweeps around it.
package geotest

import "math"

// EarthRadiusMeters is MongoDB's radius for GeoJSON distances.
const EarthRadiusMeters = 6378100.0

// Haversine is the angle in radians between two lng/lat points in degrees.
func Haversine(lng1, lat1, lng2, lat2 float64) float64 {
	r := math.Pi / 180
	dLat, dLng := (lat2-lat1)*r, (lng2-lng1)*r
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*r)*math.Cos(lat2*r)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * math.Asin(math.Min(1, math.Sqrt(a)))
}

// Destination is the point at angular distance d (radians) from (lng,
// lat) along the initial bearing (radians clockwise from north), in
// degrees.
func Destination(lng, lat, bearing, d float64) (float64, float64) {
	phi, lambda := lat*math.Pi/180, lng*math.Pi/180
	phi2 := math.Asin(math.Sin(phi)*math.Cos(d) + math.Cos(phi)*math.Sin(d)*math.Cos(bearing))
	lambda2 := lambda + math.Atan2(math.Sin(bearing)*math.Sin(d)*math.Cos(phi), math.Cos(d)-math.Sin(phi)*math.Sin(phi2))
	return math.Mod(lambda2*180/math.Pi+540, 360) - 180, phi2 * 180 / math.Pi
}

func vec(lng, lat float64) [3]float64 {
	r := math.Pi / 180
	return [3]float64{math.Cos(lat*r) * math.Cos(lng*r), math.Cos(lat*r) * math.Sin(lng*r), math.Sin(lat * r)}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// winding is the angle the ring sweeps around unit vector p: ±2π for
// points on one side of it, 0 or ∓2π on the other.
func winding(ring [][2]float64, p [3]float64) float64 {
	total := 0.0
	for i := 0; i+1 < len(ring); i++ {
		a, b := vec(ring[i][0], ring[i][1]), vec(ring[i+1][0], ring[i+1][1])
		total += math.Atan2(dot(cross(a, b), p), dot(a, b)-dot(a, p)*dot(b, p))
	}
	return total
}

// Inside reports whether lng/lat lies in the smaller region a closed ring
// bounds (as MongoDB reads a polygon): the side holding the mean of the
// ring's vertices.
func Inside(ring [][2]float64, lng, lat float64) bool {
	var c [3]float64
	for _, v := range ring[1:] {
		w := vec(v[0], v[1])
		c = [3]float64{c[0] + w[0], c[1] + w[1], c[2] + w[2]}
	}
	n := math.Sqrt(dot(c, c))
	c = [3]float64{c[0] / n, c[1] / n, c[2] / n}
	w := winding(ring, vec(lng, lat))
	return math.Abs(w) > math.Pi && w*winding(ring, c) > 0
}
